-- Idempotency keys (README "Idempotency keys", modules/idempotency): the first final response to a POST that carried an
-- `Idempotency-Key` header (or to a GraphQL mutation given `idempotencyKey`), kept for 24 hours per API key (and its
-- merchant) and key: another key of the merchant is another namespace, as it has another vault. A row is claimed
-- `processing` before the operation runs (INSERT ... ON CONFLICT, so of concurrent requests with one key exactly one
-- runs), kept alive by its request (`locked_at`, refreshed while it runs, compared with the database's clock) and
-- becomes `done` with the response. A 5xx leaves it `processing` with `locked_at` -infinity: the outcome is unknown,
-- so the key stays bound to that request and its retry may run at once; a response that did nothing (401, 408, 409,
-- 415, 429) deletes it. `request_hash` is the SHA-256 of the canonical body, so a reuse with another body is told
-- apart; `claim_id` names the request that holds a `processing` row, so a request whose claim was taken over cannot
-- write over it. `id` names one use of the key (a new one once the key expired and is used again): a payment created
-- under the key records it (payments.idempotency_key_id), so a retry that takes over finds that payment. The body is
-- sealed with SECRET_KEY (bound to `id`, as the webhook secrets are: modules/webhooks/sealed.ts), as text: a replay
-- returns the first body byte for byte; `response_headers` the response's own headers, as [name, value] pairs.
CREATE TABLE "idempotency_keys" (
	"id" uuid NOT NULL,
	"merchant_id" uuid NOT NULL,
	"api_key_id" uuid NOT NULL,
	"key" text NOT NULL,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"request_hash" text NOT NULL,
	"state" text DEFAULT 'processing' NOT NULL,
	"claim_id" uuid NOT NULL,
	"response_status" integer,
	"response_body" text,
	"response_headers" jsonb,
	"locked_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_pk" PRIMARY KEY("merchant_id","api_key_id","key"),
	CONSTRAINT "idempotency_keys_id_unique" UNIQUE("id"),
	CONSTRAINT "idempotency_keys_state" CHECK (state IN ('processing', 'done')),
	CONSTRAINT "idempotency_keys_done_response" CHECK (state = 'processing' OR (response_status IS NOT NULL AND response_body IS NOT NULL AND response_headers IS NOT NULL)),
	CONSTRAINT "idempotency_keys_key_length" CHECK (length(key) BETWEEN 1 AND 255)
);
--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_idx" ON "idempotency_keys" USING btree ("expires_at");
--> statement-breakpoint
-- A payment created under an Idempotency-Key (POST /payments, GraphQL createPayment) carries the key's use, written by
-- the INSERT that creates it: one payment per use, so a retry that runs again after a crash or a 5xx (the first
-- attempt's payment committed, its response never stored) is answered with that payment instead of making a second.
-- No foreign key on the use: keys are purged after 24 hours, the payment stays.
ALTER TABLE "payments" ADD COLUMN "idempotency_api_key_id" uuid;
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "idempotency_key" text;
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "idempotency_key_id" uuid;
--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_idempotency_key_whole" CHECK ((idempotency_key IS NULL) = (idempotency_api_key_id IS NULL) AND (idempotency_key IS NULL) = (idempotency_key_id IS NULL));
--> statement-breakpoint
CREATE UNIQUE INDEX "payments_idempotency_key_idx" ON "payments" USING btree ("merchant_id","idempotency_api_key_id","idempotency_key","idempotency_key_id") WHERE idempotency_key IS NOT NULL;
