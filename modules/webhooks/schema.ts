import { sql } from "drizzle-orm";
import { bigserial, boolean, index, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { statusEvents, ts } from "../../db/columns.js";
import { merchants } from "../merchants/schema.js";
import { vaultConfigs } from "../vault/schema.js";

// The webhooks module's tables: only this module writes them (other modules read them through its index.ts).

export const webhookConfigs = pgTable("webhook_configs", {
  id: uuid("id").primaryKey().defaultRandom(),
  merchantId: uuid("merchant_id")
    .notNull()
    .unique()
    .references(() => merchants.id),
  url: text("url").notNull(),
  events: text("events").array().notNull(),
  isActive: boolean("is_active").notNull().default(true),
  /** `whsec_…`; null for legacy webhooks, which sign with the API key. */
  secret: text("secret"),
  /**
   * Legacy webhooks (no dedicated secret) sign with the merchant's API key, but `api_keys` stores only its
   * SHA-256: the key is captured here when the merchant creates a legacy webhook (`PUT /v1/webhooks` with
   * `{legacy: true}`, signed with the key of that request) and cleared when a secret is generated.
   */
  legacyApiKey: text("legacy_api_key"),
  createdAt: ts("created_at").notNull().defaultNow(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/** Outbox: one row per event to deliver, written in the transaction of the state change that causes it. */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    /** `payment` (X-Signature) or `vault` (X-Webhook-Signature). */
    kind: text("kind").notNull().default("payment"),
    event: text("event").notNull(),
    paymentId: uuid("payment_id"),
    depositId: text("deposit_id"),
    /** Vault deliveries: the vault whose webhook receives them (read at send time). */
    vaultId: uuid("vault_id"),
    /** Idempotency: one delivery per (event, subject, cause). */
    dedupeKey: text("dedupe_key").notNull().unique(),
    payload: jsonb("payload").notNull(),
    /** The exact JSON text sent (and signed) on every attempt; null only on rows older than this column (then `payload` is serialized). */
    body: text("body"),
    status: text("status").notNull().default("pending"), // pending | success | failed
    /** HTTP attempts made so far (every round, manual resends included). */
    attempts: integer("attempts").notNull().default(0),
    /** The delivery is `failed` once `attempts` reaches this: 3 (1 for `payment.awaiting_gas`); a manual resend allows one more. */
    maxAttempts: integer("max_attempts").notNull().default(3),
    nextAttemptAt: ts("next_attempt_at").notNull().defaultNow(),
    /** Lease of the dispatcher replica that claimed the row (FOR UPDATE SKIP LOCKED); expired leases are reclaimed. */
    lockedUntil: ts("locked_until"),
    /** Token of the claim holding the lease: only its holder records the result. */
    claimToken: uuid("claim_token"),
    lastHttpStatus: integer("last_http_status"),
    lastResponse: text("last_response"),
    lastError: text("last_error"),
    lastAttemptAt: ts("last_attempt_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
    deliveredAt: ts("delivered_at"),
  },
  (t) => [
    index("webhook_deliveries_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`status = 'pending'`),
    index("webhook_deliveries_merchant_idx").on(t.merchantId, t.createdAt.desc()),
    index("webhook_deliveries_payment_idx").on(t.paymentId),
  ],
);

/** One row per change of a delivery's status (modules/webhooks/transition.ts: a batch's rows in one statement). */
export const webhookDeliveryEvents = statusEvents("webhook_delivery_events", {
  column: "delivery_id",
  references: () => webhookDeliveries.id,
});

/**
 * Vault webhook target of a vault (one per vault; a merchant has one vault per API key). Deliveries go
 * through the same outbox (`webhook_deliveries.kind = 'vault'`, `vault_id`). `events` holds
 * `deposit.completed`, `deposit.failed` and/or `deposit.*`; `secret` (`whsec_…`) is optional: without it
 * no signature header is sent. The Vault API (`/vault/v1/config/webhooks`) manages these rows through
 * modules/webhooks/vault-config.ts.
 */
export const vaultWebhookConfigs = pgTable("vault_webhook_configs", {
  id: uuid("id").primaryKey().defaultRandom(),
  merchantId: uuid("merchant_id")
    .notNull()
    .references(() => merchants.id),
  vaultId: uuid("vault_id")
    .notNull()
    .unique()
    .references(() => vaultConfigs.id),
  url: text("url").notNull(),
  events: text("events").array().notNull(),
  secret: text("secret"),
  isActive: boolean("is_active").notNull().default(true),
  createdAt: ts("created_at").notNull().defaultNow(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/** One row per HTTP attempt: the delivery log. */
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    deliveryId: uuid("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id),
    attempt: integer("attempt").notNull(),
    url: text("url").notNull(),
    httpStatus: integer("http_status"),
    response: text("response"),
    error: text("error"),
    durationMs: integer("duration_ms"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId)],
);
