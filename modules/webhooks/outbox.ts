import type pg from "pg";
import { isPaymentEvent, isVaultEvent, vaultSubscribed, type PaymentEventName } from "./events.js";
import { maxAttemptsFor } from "./retry-policy.js";

export type PaymentWebhookEvent = PaymentEventName;
export type VaultWebhookEvent = "deposit.completed" | "deposit.failed";

// The outbox: an event is a row of `webhook_deliveries` written by the caller's own transaction, so it
// exists if and only if the state change that caused it committed. The dispatcher
// (processors/webhook-dispatcher.ts) delivers it later, at least once.

type Insert = {
  merchantId: string;
  kind: "payment" | "vault";
  event: string;
  paymentId: string | null;
  depositId: string | null;
  dedupeKey: string;
  payload: Record<string, unknown>;
  /** Event time (Unix ms, the caller's clock): the row's creation time and its first attempt's due time. */
  at: number | null;
};

async function insertDelivery(client: pg.PoolClient, d: Insert): Promise<boolean> {
  // The body is serialized once: every attempt sends (and signs) these exact bytes.
  const body = JSON.stringify(d.payload);
  const { rowCount } = await client.query(
    `INSERT INTO webhook_deliveries
       (merchant_id, kind, event, payment_id, deposit_id, dedupe_key, payload, body, max_attempts, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, COALESCE($10::timestamptz, now()), COALESCE($10::timestamptz, now()))
     ON CONFLICT (dedupe_key) DO NOTHING`,
    [
      d.merchantId,
      d.kind,
      d.event,
      d.paymentId,
      d.depositId,
      d.dedupeKey,
      body,
      body,
      maxAttemptsFor(d.event),
      d.at === null ? null : new Date(d.at),
    ],
  );
  return rowCount === 1;
}

/** The events the merchant's active webhook subscribes to; null without one. */
async function activeEvents(
  client: pg.PoolClient,
  table: "webhook_configs" | "vault_webhook_configs",
  merchantId: string,
): Promise<string[] | null> {
  const { rows } = await client.query<{ events: string[] }>(`SELECT events FROM ${table} WHERE merchant_id = $1 AND is_active`, [
    merchantId,
  ]);
  return rows[0]?.events ?? null;
}

const eventTime = (input: { now?: number }, fallback: unknown): number | null =>
  typeof input.now === "number" ? input.now : typeof fallback === "number" && Number.isFinite(fallback) ? fallback : null;

/**
 * Inside the caller's transaction (client = a pg PoolClient in BEGIN). Writes an outbox row only when
 * the merchant has an active config subscribed to the event; idempotent on dedupeKey (ON CONFLICT DO
 * NOTHING). Returns true when a row was written. `payload` is the complete body (common fields plus the
 * event's optional ones); its `event` must equal `event`. The first attempt is due at `now` (default:
 * `payload.timestamp`, else the database clock).
 */
export async function enqueuePaymentWebhook(
  client: pg.PoolClient,
  input: {
    merchantId: string;
    paymentId: string;
    event: PaymentWebhookEvent;
    payload: Record<string, unknown>;
    dedupeKey: string;
    now?: number;
  },
): Promise<boolean> {
  if (!isPaymentEvent(input.event)) throw new Error(`unknown payment webhook event: ${String(input.event)}`);
  if (input.payload.event !== input.event)
    throw new Error(`webhook payload.event (${String(input.payload.event)}) differs from event ${input.event}`);
  const events = await activeEvents(client, "webhook_configs", input.merchantId);
  if (!events?.includes(input.event)) return false;
  return insertDelivery(client, {
    merchantId: input.merchantId,
    kind: "payment",
    event: input.event,
    paymentId: input.paymentId,
    depositId: null,
    dedupeKey: input.dedupeKey,
    payload: input.payload,
    at: eventTime(input, input.payload.timestamp),
  });
}

/**
 * Vault counterpart: writes `{event, data, timestamp}` when the merchant's active
 * `vault_webhook_configs` row subscribes to the event (or to `deposit.*`). `data` holds the spec's
 * deposit fields (depositId, externalUserId, amount, fee, netAmount, tokenSymbol, tokenAddress, chainId,
 * depositAddress, status, depositTxHash, processTxHash, timestamp). `timestamp` = `now` (default
 * `data.timestamp`, else the time of the call).
 */
export async function enqueueVaultWebhook(
  client: pg.PoolClient,
  input: {
    merchantId: string;
    depositId: string;
    event: VaultWebhookEvent;
    data: Record<string, unknown>;
    dedupeKey: string;
    now?: number;
  },
): Promise<boolean> {
  if (!isVaultEvent(input.event)) throw new Error(`unknown vault webhook event: ${String(input.event)}`);
  const events = await activeEvents(client, "vault_webhook_configs", input.merchantId);
  if (!events || !vaultSubscribed(events, input.event)) return false;
  const at = eventTime(input, input.data.timestamp) ?? Date.now();
  return insertDelivery(client, {
    merchantId: input.merchantId,
    kind: "vault",
    event: input.event,
    paymentId: null,
    depositId: input.depositId,
    dedupeKey: input.dedupeKey,
    payload: { event: input.event, data: input.data, timestamp: at },
    at,
  });
}
