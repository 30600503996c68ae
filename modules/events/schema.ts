import { sql } from "drizzle-orm";
import { bigint, bigserial, check, index, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { ts } from "../../db/columns.js";
import { merchants } from "../merchants/schema.js";

// The events module's tables: only this module writes them (other modules read them through its index.ts).

/**
 * The event feed (GET /v1/events, modules/events; migration 0023): every payment and Vault event, written in the
 * transaction of its state change whatever the webhook configuration, with the webhook's id and exact body. `seq` is
 * the write order; `position`, counted per merchant and given to committed rows by the holder of the merchant's
 * sequencing lock (modules/events/sequence.ts), the feed's order.
 */
export const eventFeed = pgTable(
  "event_feed",
  {
    seq: bigserial("seq", { mode: "bigint" }).primaryKey(),
    /** The `webhook-id` of the event's deliveries (their `webhook_deliveries.id`). */
    id: uuid("id").notNull().unique().defaultRandom(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    kind: text("kind").notNull(), // payment | vault
    type: text("type").notNull(),
    paymentId: uuid("payment_id"),
    depositId: text("deposit_id"),
    /** Vault events: seen only with the API key of this vault. */
    vaultId: uuid("vault_id"),
    /** The outbox's idempotency key: one event per key. */
    dedupeKey: text("dedupe_key").notNull().unique(),
    /** The webhook body, exactly as its deliveries send and sign it. */
    body: text("body").notNull(),
    /** Feed order within the merchant's feed; null until the event is sequenced (modules/events/sequence.ts). */
    position: bigint("position", { mode: "bigint" }),
    /** The event's time (the caller's clock): `createdAt`. */
    createdAt: ts("created_at").notNull().defaultNow(),
    /** When the row was written (database clock): retention counts from it. */
    insertedAt: ts("inserted_at").notNull().defaultNow(),
  },
  (t) => [
    check("event_feed_kind", sql`kind IN ('payment', 'vault')`),
    check("event_feed_position_positive", sql`position > 0`),
    uniqueIndex("event_feed_merchant_position_idx").on(t.merchantId, t.position),
    index("event_feed_unsequenced_idx")
      .on(t.merchantId, t.seq)
      .where(sql`position IS NULL`),
    index("event_feed_inserted_idx")
      .on(t.insertedAt)
      .where(sql`position IS NOT NULL`),
  ],
);

/** The last position given in each merchant's feed; kept when events are purged (positions are never reused). */
export const eventFeedHeads = pgTable(
  "event_feed_heads",
  {
    merchantId: uuid("merchant_id")
      .primaryKey()
      .references(() => merchants.id),
    position: bigint("position", { mode: "bigint" })
      .notNull()
      .default(sql`0`),
  },
  () => [check("event_feed_heads_position_nonnegative", sql`position >= 0`)],
);
