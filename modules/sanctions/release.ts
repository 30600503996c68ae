import type pg from "pg";
import { zeroAddress } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { Conflict } from "../../core/errors.js";
import { withTransaction } from "../../db/client.js";
import { clearRecoveryWait, transition } from "../payments/index.js";
import { transitionDeposit } from "../vault/index.js";
import { SCREENED_PAYMENT_STATUSES } from "./hold-payment.js";
import { checkDecision, notHeld, openHold, refuseIfReturning, resolveHold, type Decision, type HoldSubject, type Target } from "./holds.js";
import { RECOVERY_HELD_ERROR } from "./recovery.js";
import { clearWaits } from "./waits.js";

/**
 * `sanctions release`: the operator clears what screening stopped. One transaction: the move, the hold, the audit row.
 * - A held payment goes back to `withdraw_request` if it was held from there, else to `paid` (a payment held from
 *   `deploying_wallet` had its Gas Tank fee refunded: the settler reserves it again). A held recovery is signed on
 *   the next pass. A held deposit goes back to `detected` and its group is swept.
 * - What is released is the flagged address, for that payment (and its recoveries): other senders of the payment are
 *   still screened, before the sweep and before any recovery. A released deposit is not screened again.
 * - A payment or recovery with no hold whose screening waits on an `unidentified` sender (native coin; `sanctions list`)
 *   can be released too: the operator accepts its unidentified senders. That is recorded as a released hold with the
 *   zero address and source `unidentified`, and the native-coin search is skipped for that subject from then on.
 */
export async function releaseHold(deps: Pick<AppDeps, "db" | "now">, target: Target, decision: Decision) {
  const d = checkDecision(decision);
  return withTransaction(deps.db, async (client) => {
    const now = deps.now();
    const { subject, id, hold } = await openHold(client, target);
    if (!hold) return releaseUnidentified(client, subject, id, d, now);
    await refuseIfReturning(client, hold.id);
    const why = `sanctions hold released by ${d.actor}: ${d.reason}`;
    if (hold.subject === "payment") {
      const to = hold.from_status === "withdraw_request" ? "withdraw_request" : "paid";
      const moved = await transition(client, hold.payment_id!, { from: ["sanctioned"], to, reason: why, now });
      if (!moved) throw new Conflict("Payment is not sanctioned");
      await clearWaits(client, "payment", [hold.payment_id!]);
      return resolveHold(client, hold, { from: ["held"], to: "released" }, { action: "release", from: "sanctioned", to }, d, now);
    }
    if (hold.subject === "recovery") {
      const status = await clearRecoveryWait(client, hold.recovery_id!, RECOVERY_HELD_ERROR, now);
      return resolveHold(client, hold, { from: ["held"], to: "released" }, { action: "release", from: status, to: status }, d, now);
    }
    const moved = await transitionDeposit(client, hold.deposit_id!, {
      from: ["held"],
      to: "detected",
      reason: why,
      now,
      set: { next_attempt_at: null },
    });
    if (!moved) throw new Conflict("Deposit is not held");
    return resolveHold(client, hold, { from: ["held"], to: "released" }, { action: "release", from: "held", to: "detected" }, d, now);
  });
}

/** The release of a payment or recovery whose screening waits on an unidentified sender (no hold). */
async function releaseUnidentified(client: pg.PoolClient, subject: HoldSubject, id: string, d: Decision, now: number) {
  if (subject === "vault_deposit") throw notHeld(subject);
  const { rows: waits } = await client.query<{ kind: string; payment_id: string; chain_id: number }>(
    `SELECT kind, payment_id, chain_id FROM sanctions_screenings WHERE subject = $1 AND subject_id = $2 FOR UPDATE`,
    [subject, id],
  );
  const wait = waits[0];
  if (!wait) throw notHeld(subject);
  if (wait.kind !== "unidentified")
    throw new Conflict(
      `${subject === "payment" ? "Payment" : "Recovery"} waits for a sanctions source that did not answer: it is screened again when the source answers`,
    );
  const { rows: cur } = await client.query<{ status: string }>(
    subject === "payment" ? `SELECT status FROM payments WHERE id = $1` : `SELECT status FROM fund_recoveries WHERE id = $1`,
    [id],
  );
  const status = cur[0]!.status;
  const screened = subject === "payment" ? (SCREENED_PAYMENT_STATUSES as readonly string[]).includes(status) : status === "requested";
  if (!screened) throw notHeld(subject);
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO sanctions_holds (subject, payment_id, recovery_id, chain_id, address, source, from_status, status, created_at, resolved_at)
     VALUES ($1, $2, $3, $4, $5, 'unidentified', $6, 'released', $7, $7) RETURNING id`,
    [subject, wait.payment_id, subject === "recovery" ? id : null, wait.chain_id, zeroAddress, status, new Date(now)],
  );
  await clearWaits(client, subject, [id]);
  const hold = { id: rows[0]!.id, payment_id: wait.payment_id, recovery_id: subject === "recovery" ? id : null, deposit_id: null };
  // The hold is written resolved; resolveHold sets the same status and time again and writes the audit rows.
  return resolveHold(client, hold, { from: ["released"], to: "released" }, { action: "release", from: status, to: status }, d, now);
}
