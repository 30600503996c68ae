import { getAddress, zeroAddress } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { logger } from "../../core/log.js";
import { withTransaction } from "../../db/client.js";
import { refundSettlementFee } from "../gas-tank/index.js";
import { transition } from "../payments/index.js";
import type { PaymentStatus } from "../payments/index.js";
import type { PaymentRow } from "../payments/index.js";
import { clearWaits } from "./waits.js";

/** The statuses a payment is screened in, and held from. */
export const SCREENED_PAYMENT_STATUSES = ["paid", "deploying_wallet", "withdraw_request"] as const satisfies readonly PaymentStatus[];

/**
 * Holds a payment whose sender is flagged: `paid | deploying_wallet | withdraw_request -> sanctioned` with the event
 * `payment.sanctioned` (extension fields `sanctionedAddress`, `source`: `oracle` or `list`), the audit row of the match
 * (`sanctions_holds`) and, from `deploying_wallet`, the refund of the Gas Tank fee its reservation debited, in one
 * transaction. Nothing is swept: the funds stay at the deposit address. Returns whether it moved (false: the payment
 * had left that status meanwhile).
 */
export async function holdPayment(
  deps: Pick<AppDeps, "db" | "now">,
  p: PaymentRow,
  match: { address: string; source: string; kind: "oracle" | "list" },
): Promise<boolean> {
  const from = p.status as (typeof SCREENED_PAYMENT_STATUSES)[number];
  if (!(SCREENED_PAYMENT_STATUSES as readonly string[]).includes(from)) return false;
  return withTransaction(deps.db, async (client) => {
    const now = deps.now();
    // One event per hold: a payment released and held again (by another sender) is announced again.
    const { rows: before } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM sanctions_holds WHERE payment_id = $1 AND subject = 'payment' AND address <> $2`,
      [p.id, zeroAddress],
    );
    const n = before[0]!.n;
    const moved = await transition(client, p.id, {
      from: [from],
      to: "sanctioned",
      reason: `sanctions screening: sender ${match.address} flagged by ${match.source}`,
      now,
      event: {
        name: "payment.sanctioned",
        extra: { sanctionedAddress: getAddress(match.address), source: match.kind },
        dedupeKey: n === 0 ? `payment.sanctioned:${p.id}` : `payment.sanctioned:${p.id}:${n + 1}`,
      },
    });
    if (!moved) return false;
    if (from === "deploying_wallet") await refundSettlementFee(client, p.id);
    await client.query(
      `INSERT INTO sanctions_holds (subject, payment_id, chain_id, address, source, from_status, status, created_at)
       VALUES ('payment', $1, $2, $3, $4, $5, 'held', $6)`,
      [p.id, p.chain_id, match.address.toLowerCase(), match.source, from, new Date(now)],
    );
    await clearWaits(client, "payment", [p.id]);
    logger("sanctions").warn(
      { chainId: p.chain_id, paymentId: p.id, address: match.address, source: match.source, from },
      "payment held: sender flagged by sanctions screening",
    );
    return true;
  });
}
