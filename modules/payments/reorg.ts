import type pg from "pg";
import { refundSettlementFee } from "../gas-tank/index.js";
import { formatAmount } from "../../core/money.js";
import { transition } from "./state-machine.js";
import type { PaymentStatus } from "./status.js";
import type { PaymentRow } from "./types.js";

/**
 * A payment counted as paid whose deposit left the canonical chain (a re-org) before it was swept:
 * back to `pending` with what is still there, its Gas Tank fee refunded, and `payment.reorged` told
 * (not in the default subscriptions). Runs in the caller's transaction; null when the payment has moved on.
 * `from`: the statuses the caller saw (the detector: paid, awaiting_gas; the settler: deploying_wallet).
 */
export async function reopenAfterReorg(
  client: pg.PoolClient,
  paymentId: string,
  input: {
    from: readonly PaymentStatus[];
    received: bigint;
    receivedBlock: string | null;
    txHash: string | null;
    reason: string;
    now: number;
  },
): Promise<PaymentRow | null> {
  const { rows } = await client.query<PaymentRow>(`SELECT received_units, token_decimals FROM payments WHERE id = $1 FOR UPDATE`, [
    paymentId,
  ]);
  if (!rows[0]) return null;
  const previous = BigInt(rows[0].received_units);
  // One event per re-org of this payment: a payment re-orged twice tells the merchant twice.
  const { rows: seen } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM payment_events WHERE payment_id = $1 AND to_status = 'pending' AND reason LIKE 'reorg:%'`,
    [paymentId],
  );
  const moved = await transition(client, paymentId, {
    from: input.from,
    to: "pending",
    reason: `reorg: ${input.reason}`,
    set: {
      received_units: input.received.toString(),
      overpayment_units: "0",
      underpayment_units: "0",
      payment_tx_hash: input.received > 0n ? input.txHash : null,
      payment_block_number: input.received > 0n ? input.receivedBlock : null,
      received_block_number: input.received > 0n ? input.receivedBlock : null,
      paid_at: null,
    },
    now: input.now,
    event: {
      name: "payment.reorged",
      extra: { previousReceivedAmount: formatAmount(previous, rows[0].token_decimals), reason: input.reason },
      dedupeKey: `payment.reorged:${paymentId}:${seen[0]!.n + 1}`,
    },
  });
  // The fee debited when settlement was reserved is given back; a new reservation debits again.
  if (moved) await refundSettlementFee(client, paymentId);
  return moved;
}

/**
 * A payment waiting for its confirmations whose full amount left the canonical chain (a re-org) before it was
 * counted: `waiting_for_confirmation -> pending` with what still counts. No event, no refund: it was never reported
 * paid, and nothing was reserved. The audit row's reason starts with `reorg:` like reopenAfterReorg's. Runs in the
 * caller's transaction; null when the payment has moved on (a replica took it first, or it was paid meanwhile).
 */
export async function unconfirmAfterReorg(
  client: pg.PoolClient,
  paymentId: string,
  input: {
    /** The counted amount (at least `blockConfirmations` deep) and its first transaction, first and newest block. */
    received: bigint;
    txHash: string | null;
    block: string | null;
    lastBlock: string | null;
    reason: string;
    now: number;
  },
): Promise<PaymentRow | null> {
  const some = input.received > 0n;
  return transition(client, paymentId, {
    from: ["waiting_for_confirmation"],
    to: "pending",
    reason: `reorg: ${input.reason}`,
    set: {
      received_units: input.received.toString(),
      overpayment_units: "0",
      underpayment_units: "0",
      payment_tx_hash: some ? input.txHash : null,
      payment_block_number: some ? input.block : null,
      received_block_number: some ? input.lastBlock : null,
    },
    now: input.now,
  });
}
