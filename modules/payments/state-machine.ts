import type pg from "pg";
import { enqueuePaymentWebhook, type PaymentWebhookEvent } from "../webhooks/index.js";
import { canTransition, type PaymentStatus } from "./status.js";
import { paymentWebhookPayload } from "./serialize.js";
import type { PaymentRow } from "./types.js";

export type TransitionInput = {
  to: PaymentStatus;
  /** Only move from one of these (the caller's view of the current status). */
  from: readonly PaymentStatus[];
  /** Extra condition checked on the locked row (e.g. nothing received yet). */
  guard?: (row: PaymentRow) => boolean;
  reason?: string;
  /** Column updates applied with the status change (snake_case column -> value). */
  set?: Record<string, unknown>;
  /** Webhook event emitted in the same transaction, with its optional fields. */
  event?: { name: PaymentWebhookEvent; extra?: Record<string, unknown>; dedupeKey?: string };
  now: number;
};

/**
 * The one place a payment changes status. Runs inside the caller's transaction: locks the row,
 * checks the move is allowed, writes the change, the audit row and the outbox event together.
 * Returns null (and changes nothing) when the payment is no longer in an expected state, so a
 * processor repeating a step after a crash or beside a replica is a no-op.
 */
export async function transition(client: pg.PoolClient, paymentId: string, input: TransitionInput): Promise<PaymentRow | null> {
  const { rows } = await client.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1 FOR UPDATE`, [paymentId]);
  const current = rows[0];
  if (!current || !input.from.includes(current.status as PaymentStatus)) return null;
  if (input.guard && !input.guard(current)) return null;
  if (!canTransition(current.status as PaymentStatus, input.to)) throw new Error(`illegal transition ${current.status} -> ${input.to}`);

  const set: Record<string, unknown> = { ...input.set, status: input.to, updated_at: new Date(input.now) };
  const cols = Object.keys(set);
  const { rows: updated } = await client.query<PaymentRow>(
    `UPDATE payments SET ${cols.map((c, i) => `"${c}" = $${i + 2}`).join(", ")} WHERE id = $1 RETURNING *`,
    [paymentId, ...cols.map((c) => set[c])],
  );
  const next = updated[0]!;
  await client.query(
    `INSERT INTO payment_events (payment_id, from_status, to_status, reason, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
    [paymentId, current.status, input.to, input.reason ?? null, input.set ? JSON.stringify(input.set) : null, new Date(input.now)],
  );
  if (input.event) {
    const payload = await paymentWebhookPayload(client, next, input.event.name, input.now, input.event.extra);
    await enqueuePaymentWebhook(client, {
      merchantId: next.merchant_id,
      paymentId,
      event: input.event.name,
      payload,
      dedupeKey: input.event.dedupeKey ?? `${input.event.name}:${paymentId}`,
    });
  }
  return next;
}
