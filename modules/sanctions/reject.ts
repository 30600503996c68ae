import { getAddress } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { Conflict } from "../../core/errors.js";
import { withTransaction } from "../../db/client.js";
import { transition, transitionRecovery } from "../payments/index.js";
import { checkDecision, notHeld, openHold, refuseIfReturning, resolveHold, type Decision, type Target } from "./holds.js";

/** What a rejection does with the funds, in its answer. */
const REJECT_FUNDS =
  "not moved: they stay at the deposit address, which pays only its committed payout, until the operator returns them with the factory owner's key (`sanctions return`, docs/sanctions.md)";

const RECOVERY_REJECTED_ERROR = "rejected by sanctions screening: the funds stay at the address";

/**
 * `sanctions reject`: the operator decides the held funds are never to be settled to the merchant or business.
 * **No funds move here**: a deposit address is a CREATE2 forwarder that commits to its payout; the settler's sweeps
 * pay only that payout (and a fee to an allow-listed fee recipient). Sending the funds elsewhere is a separate, explicit
 * step with the factory owner's key, which no service process holds: `sanctions return` (return.ts). So a rejection is
 * the operator's decision on record and its consequences here:
 * - a payment becomes `cancelled` (event `payment.cancelled`, `reason: "sanctions"`); its funds stay at its address
 *   and are not recoverable by the merchant (modules/sanctions/blocked.ts);
 * - a recovery becomes `failed`; that token on that address is not recoverable again;
 * - a vault deposit stays `held`, so its (address, token) is not swept (clean deposits included: `sanctions list`
 *   shows the group as frozen) until its funds are returned.
 */
export async function rejectHold(deps: Pick<AppDeps, "db" | "now">, target: Target, decision: Decision) {
  const d = checkDecision(decision);
  return withTransaction(deps.db, async (client) => {
    const now = deps.now();
    const { subject, hold } = await openHold(client, target);
    if (!hold) throw notHeld(subject);
    await refuseIfReturning(client, hold.id);
    let move: { from: string; to: string };
    if (hold.subject === "payment") {
      const moved = await transition(client, hold.payment_id!, {
        from: ["sanctioned"],
        to: "cancelled",
        reason: `sanctions hold rejected by ${d.actor}: ${d.reason}`,
        now,
        event: { name: "payment.cancelled", extra: { reason: "sanctions", sanctionedAddress: getAddress(hold.address) } },
      });
      if (!moved) throw new Conflict("Payment is not sanctioned");
      move = { from: "sanctioned", to: "cancelled" };
    } else if (hold.subject === "recovery") {
      const moved = await transitionRecovery(client, hold.recovery_id!, {
        from: ["requested"],
        to: "failed",
        reason: `sanctions hold rejected by ${d.actor}: ${d.reason}`,
        set: { error: RECOVERY_REJECTED_ERROR },
        now,
      });
      if (!moved) throw new Conflict("Recovery is not requested");
      move = { from: "requested", to: "failed" };
    } else {
      const row = await client.query(`SELECT status FROM vault_deposits WHERE id = $1 FOR UPDATE`, [hold.deposit_id]);
      if (row.rows[0]?.status !== "held") throw new Conflict("Deposit is not held");
      move = { from: "held", to: "held" };
    }
    const out = await resolveHold(client, hold, { from: ["held"], to: "rejected" }, { action: "reject", ...move }, d, now);
    return { ...out, funds: REJECT_FUNDS };
  });
}
