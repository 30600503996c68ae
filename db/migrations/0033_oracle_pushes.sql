CREATE TABLE "oracle_push_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"push_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oracle_pushes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"chain_id" integer NOT NULL,
	"oracle" text NOT NULL,
	"prices" jsonb NOT NULL,
	"sources" jsonb NOT NULL,
	"status" text DEFAULT 'signed' NOT NULL,
	"signer" text NOT NULL,
	"nonce" integer NOT NULL,
	"tx_hash" text NOT NULL,
	"raw_tx" text NOT NULL,
	"block_number" numeric(78, 0),
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "oracle_pushes_tx_hash_unique" UNIQUE("tx_hash"),
	CONSTRAINT "oracle_pushes_status" CHECK (status IN ('signed', 'sent', 'mined', 'reverted', 'dropped')),
	CONSTRAINT "oracle_pushes_lowercase" CHECK (oracle = lower(oracle) AND signer = lower(signer))
);
--> statement-breakpoint
ALTER TABLE "oracle_push_events" ADD CONSTRAINT "oracle_push_events_push_id_oracle_pushes_id_fk" FOREIGN KEY ("push_id") REFERENCES "public"."oracle_pushes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oracle_push_events_push_idx" ON "oracle_push_events" USING btree ("push_id");--> statement-breakpoint
CREATE UNIQUE INDEX "oracle_pushes_open_idx" ON "oracle_pushes" USING btree ("chain_id") WHERE status IN ('signed', 'sent');--> statement-breakpoint
CREATE INDEX "oracle_pushes_chain_idx" ON "oracle_pushes" USING btree ("chain_id","created_at");