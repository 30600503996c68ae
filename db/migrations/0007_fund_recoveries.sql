CREATE TABLE "fund_recoveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"payment_id" uuid NOT NULL,
	"merchant_id" uuid NOT NULL,
	"chain_id" integer NOT NULL,
	"token" text NOT NULL,
	"status" text DEFAULT 'requested' NOT NULL,
	"requested_units" numeric(78, 0) NOT NULL,
	"recovered_units" numeric(78, 0),
	"signer" text,
	"nonce" integer,
	"tx_hash" text,
	"raw_tx" text,
	"block_number" numeric(78, 0),
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "fund_recoveries_tx_hash_unique" UNIQUE("tx_hash")
);
--> statement-breakpoint
CREATE TABLE "token_metadata" (
	"chain_id" integer NOT NULL,
	"address" text NOT NULL,
	"symbol" text,
	"decimals" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "token_metadata_chain_id_address_pk" PRIMARY KEY("chain_id","address")
);
--> statement-breakpoint
ALTER TABLE "fund_recoveries" ADD CONSTRAINT "fund_recoveries_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "fund_recoveries" ADD CONSTRAINT "fund_recoveries_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "fund_recoveries_open_idx" ON "fund_recoveries" USING btree ("payment_id","token") WHERE status in ('requested', 'signed', 'sent', 'mined');--> statement-breakpoint
CREATE INDEX "fund_recoveries_payment_idx" ON "fund_recoveries" USING btree ("payment_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "fund_recoveries_chain_status_idx" ON "fund_recoveries" USING btree ("chain_id","status");
