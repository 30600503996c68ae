-- The event feed (GET /v1/events, modules/events): every payment and Vault event of a merchant, written in the
-- transaction of the state change whatever the merchant's webhook subscription, with the webhook's exact body and its
-- id (the `webhook-id` of its deliveries). `seq` is the write order; `position` is the feed order, counted per merchant
-- (a cursor tells nothing of other merchants) and given to committed rows, one batch at a time, by whoever holds the
-- merchant's sequencing lock (a transaction advisory lock, taken with try: nobody waits for it; modules/events/sequence.ts),
-- so a reader that has seen a position never gets an event at a lower one later (a bigserial alone can: a transaction
-- that took seq 10 may commit after one that took seq 11 was read). `created_at` is the event's time (the caller's
-- clock, shown as `createdAt`); `inserted_at` the database's time of the insert, which retention counts from.
CREATE TABLE "event_feed" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"merchant_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"type" text NOT NULL,
	"payment_id" uuid,
	"deposit_id" text,
	"vault_id" uuid,
	"dedupe_key" text NOT NULL,
	"body" text NOT NULL,
	"position" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"inserted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "event_feed_id_unique" UNIQUE("id"),
	CONSTRAINT "event_feed_dedupe_key_unique" UNIQUE("dedupe_key"),
	CONSTRAINT "event_feed_kind" CHECK ("kind" IN ('payment', 'vault')),
	CONSTRAINT "event_feed_position_positive" CHECK ("position" > 0)
);
--> statement-breakpoint
-- The last position given in each merchant's feed (a row from its first positioned event on). Kept when events are
-- purged: positions are never given twice, so a cursor past purged events still marks where its reader stands.
CREATE TABLE "event_feed_heads" (
	"merchant_id" uuid PRIMARY KEY NOT NULL,
	"position" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "event_feed_heads_position_nonnegative" CHECK ("position" >= 0)
);
--> statement-breakpoint
ALTER TABLE "event_feed" ADD CONSTRAINT "event_feed_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "event_feed_heads" ADD CONSTRAINT "event_feed_heads_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
-- Reads go by (merchant_id, position), unique: a position is given once per merchant. The sequencer finds its work by
-- the second index, the purge by the third.
CREATE UNIQUE INDEX "event_feed_merchant_position_idx" ON "event_feed" USING btree ("merchant_id", "position");
--> statement-breakpoint
CREATE INDEX "event_feed_unsequenced_idx" ON "event_feed" USING btree ("merchant_id", "seq") WHERE "position" IS NULL;
--> statement-breakpoint
CREATE INDEX "event_feed_inserted_idx" ON "event_feed" USING btree ("inserted_at") WHERE "position" IS NOT NULL;
--> statement-breakpoint
-- Events already in the outbox (webhook.test deliveries are no merchant event): same id, body and event time; kept
-- EVENT_FEED_RETENTION_DAYS from this migration (their inserted_at).
INSERT INTO "event_feed" ("id", "merchant_id", "kind", "type", "payment_id", "deposit_id", "vault_id", "dedupe_key", "body", "created_at")
SELECT "id", "merchant_id", "kind", "event", "payment_id", "deposit_id", "vault_id", "dedupe_key", COALESCE("body", "payload"::text), "created_at"
  FROM "webhook_deliveries"
 WHERE "event" <> 'webhook.test' AND "kind" IN ('payment', 'vault')
 ORDER BY "created_at", "id";
