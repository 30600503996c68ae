import type pg from "pg";
import { recordEvent } from "../events/index.js";
import { isPaymentEvent, isVaultEvent, vaultSubscribed, type PaymentEventName } from "./events.js";
import { maxAttemptsFor } from "./retry-policy.js";

export type PaymentWebhookEvent = PaymentEventName;
export type VaultWebhookEvent = "deposit.completed" | "deposit.failed";

// The outbox: an event is a row of `webhook_deliveries` written by the caller's own transaction, so it
// exists if and only if the state change that caused it committed. The dispatcher
// (processors/webhook-dispatcher.ts) delivers it later, at least once.
// Every payment and Vault event is also written to the event feed (modules/events/record.ts), subscribed or not;
// its delivery takes the feed row's id (the `webhook-id`) and body, so both name and describe the event alike.

type Insert = {
  merchantId: string;
  kind: "payment" | "vault";
  event: string;
  paymentId: string | null;
  depositId: string | null;
  vaultId: string | null;
  dedupeKey: string;
  payload: Record<string, unknown>;
  /** Event time (Unix ms, the caller's clock): the row's creation time and its first attempt's due time. */
  at: number | null;
  /** The event feed's id and body of the event (recordEvent); absent: a new id, and the payload serialized here. */
  feed?: { id: string; body: string };
};

/** Writes one outbox row (no subscription check; enqueue* and test-event.ts check first). False on a repeated dedupeKey. */
export async function insertDelivery(client: pg.PoolClient, d: Insert): Promise<boolean> {
  // The body is serialized once: every attempt sends (and signs) these exact bytes.
  const body = d.feed?.body ?? JSON.stringify(d.payload);
  const { rowCount } = await client.query(
    `INSERT INTO webhook_deliveries
       (id, merchant_id, kind, event, payment_id, deposit_id, vault_id, dedupe_key, payload, body, max_attempts, next_attempt_at, created_at)
     VALUES (COALESCE($12::uuid, gen_random_uuid()), $1, $2, $3, $4, $5, $11, $6, $7::jsonb, $8, $9,
             COALESCE($10::timestamptz, now()), COALESCE($10::timestamptz, now()))
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
      d.vaultId,
      d.feed?.id ?? null,
    ],
  );
  return rowCount === 1;
}

/** The events the merchant's (payment) or the vault's (vault) active webhook subscribes to; null without one. */
async function activeEvents(
  client: pg.PoolClient,
  target: { table: "webhook_configs"; merchantId: string } | { table: "vault_webhook_configs"; merchantId: string; vaultId: string },
): Promise<string[] | null> {
  const { rows } =
    target.table === "webhook_configs"
      ? await client.query<{ events: string[] }>(`SELECT events FROM webhook_configs WHERE merchant_id = $1 AND is_active`, [
          target.merchantId,
        ])
      : await client.query<{ events: string[] }>(
          `SELECT events FROM vault_webhook_configs WHERE vault_id = $1 AND merchant_id = $2 AND is_active`,
          [target.vaultId, target.merchantId],
        );
  return rows[0]?.events ?? null;
}

const eventTime = (input: { now?: number }, fallback: unknown): number | null =>
  typeof input.now === "number" ? input.now : typeof fallback === "number" && Number.isFinite(fallback) ? fallback : null;

/**
 * Inside the caller's transaction (client = a pg PoolClient in BEGIN). Writes the event to the feed (always), and an
 * outbox row only when the merchant has an active config subscribed to the event; idempotent on dedupeKey (ON CONFLICT DO
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
  const at = eventTime(input, input.payload.timestamp);
  const row = { merchantId: input.merchantId, paymentId: input.paymentId, depositId: null, vaultId: null, dedupeKey: input.dedupeKey };
  const feed = await recordEvent(client, { ...row, kind: "payment", type: input.event, payload: input.payload, at });
  const events = await activeEvents(client, { table: "webhook_configs", merchantId: input.merchantId });
  if (!events?.includes(input.event)) return false;
  return insertDelivery(client, { ...row, kind: "payment", event: input.event, payload: input.payload, at, feed });
}

/**
 * Vault counterpart: writes `{event, data, timestamp}` to the event feed and to the outbox when the vault's
 * active `vault_webhook_configs`
 * row (a merchant has one vault per API key, each with its own webhook) subscribes to the event (or to
 * `deposit.*`); the delivery carries `vault_id`, by which the dispatcher finds the URL and secret at send time. A vault
 * that is not the merchant's writes nothing (no feed event, no delivery) and returns false. `data` holds the spec's
 * deposit fields (depositId, externalUserId, amount, fee, netAmount, tokenSymbol, tokenAddress, chainId,
 * depositAddress, status, depositTxHash, processTxHash, timestamp). `timestamp` = `now` (default
 * `data.timestamp`, else the time of the call).
 */
export async function enqueueVaultWebhook(
  client: pg.PoolClient,
  input: {
    merchantId: string;
    /** `vault_configs.id` of the deposit's vault. */
    vaultId: string;
    depositId: string;
    event: VaultWebhookEvent;
    data: Record<string, unknown>;
    dedupeKey: string;
    now?: number;
  },
): Promise<boolean> {
  if (!isVaultEvent(input.event)) throw new Error(`unknown vault webhook event: ${String(input.event)}`);
  // The feed shows a Vault event to its vault's key: never file one under a merchant that does not own the vault.
  const owned = await client.query(`SELECT 1 FROM vault_configs WHERE id = $1 AND merchant_id = $2`, [input.vaultId, input.merchantId]);
  if (owned.rowCount === 0) return false;
  const at = eventTime(input, input.data.timestamp) ?? Date.now();
  const payload = { event: input.event, data: input.data, timestamp: at };
  const row = {
    merchantId: input.merchantId,
    paymentId: null,
    depositId: input.depositId,
    vaultId: input.vaultId,
    dedupeKey: input.dedupeKey,
  };
  const feed = await recordEvent(client, { ...row, kind: "vault", type: input.event, payload, at });
  const events = await activeEvents(client, { table: "vault_webhook_configs", merchantId: input.merchantId, vaultId: input.vaultId });
  if (!events || !vaultSubscribed(events, input.event)) return false;
  return insertDelivery(client, { ...row, kind: "vault", event: input.event, payload, at, feed });
}
