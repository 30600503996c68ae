-- Every version the transaction sender signs of a nonce (chains/tx-sender.ts): the first, then replacements with higher fees.
CREATE TABLE "tx_versions" (
	"hash" text PRIMARY KEY NOT NULL,
	"chain_id" integer NOT NULL,
	"signer" text NOT NULL,
	"nonce" integer NOT NULL,
	"version" integer NOT NULL,
	"raw_tx" text NOT NULL,
	"max_fee_per_gas" numeric(78, 0) NOT NULL,
	"max_priority_fee_per_gas" numeric(78, 0) NOT NULL,
	"signed_block" bigint NOT NULL,
	"at_fee_cap" boolean DEFAULT false NOT NULL,
	"outcome" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "tx_versions_nonce_idx" ON "tx_versions" USING btree ("chain_id","signer","nonce");--> statement-breakpoint
CREATE INDEX "tx_versions_pending_idx" ON "tx_versions" USING btree ("chain_id","created_at") WHERE outcome IS NULL;