import type pg from "pg";

// The write side of the event feed (GET /v1/events): one row per payment or Vault event, in the transaction of the
// state change that causes it (called by the outbox's enqueue functions, modules/webhooks/outbox.ts), whether or not
// a webhook will deliver it. The row's id is the id of its deliveries (their `webhook-id`) and its body the exact
// text they send, so the feed and the webhooks describe one event the same way.

export type EventInput = {
  merchantId: string;
  kind: "payment" | "vault";
  /** The event name (`payment.completed`, `deposit.failed`…), the payload's `event`. */
  type: string;
  paymentId: string | null;
  depositId: string | null;
  vaultId: string | null;
  /** The outbox's idempotency key: one event per key, however often the step that writes it is repeated. */
  dedupeKey: string;
  payload: Record<string, unknown>;
  /** Event time (Unix ms); null: the database clock. */
  at: number | null;
};

/** The event as stored: its id (the deliveries' `webhook-id`) and its body (what every delivery sends and signs). */
export type RecordedEvent = { id: string; body: string };

/**
 * Writes the event inside the caller's transaction; an event already written under the same dedupeKey is returned
 * as it was first written (its id and body), and nothing new is written.
 */
export async function recordEvent(client: pg.PoolClient, e: EventInput): Promise<RecordedEvent> {
  const body = JSON.stringify(e.payload);
  const inserted = await client.query<RecordedEvent>(
    `INSERT INTO event_feed (merchant_id, kind, type, payment_id, deposit_id, vault_id, dedupe_key, body, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, COALESCE($9::timestamptz, now()))
     ON CONFLICT (dedupe_key) DO NOTHING
     RETURNING id, body`,
    [e.merchantId, e.kind, e.type, e.paymentId, e.depositId, e.vaultId, e.dedupeKey, body, e.at === null ? null : new Date(e.at)],
  );
  if (inserted.rows[0]) return inserted.rows[0];
  const { rows } = await client.query<RecordedEvent>(`SELECT id, body FROM event_feed WHERE dedupe_key = $1`, [e.dedupeKey]);
  return rows[0]!;
}

/**
 * Replaces an event's body before anything was delivered from it (the dispatcher's first attempt refreshes a block
 * that may have moved on since the event was written, e.g. a payment's `bridge`): later reads and every attempt then
 * carry these bytes.
 * @example await rewriteEventBody(pool, deliveryId, JSON.stringify(fresh));
 */
export async function rewriteEventBody(db: Pick<pg.Pool, "query">, id: string, body: string): Promise<void> {
  await db.query(`UPDATE event_feed SET body = $2 WHERE id = $1`, [id, body]);
}
