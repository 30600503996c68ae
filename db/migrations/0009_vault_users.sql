CREATE TABLE "vault_users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"vault_id" uuid NOT NULL,
	"merchant_id" uuid NOT NULL,
	"external_user_id" text NOT NULL,
	"chain_id" integer NOT NULL,
	"business_wallet" text NOT NULL,
	"salt" text NOT NULL,
	"address" text NOT NULL,
	"token_address" text NOT NULL,
	"token_symbol" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "vault_users_address_lowercase" CHECK (address = lower(address) AND business_wallet = lower(business_wallet))
);
--> statement-breakpoint
CREATE TABLE "vault_sweeps" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"chain_id" integer NOT NULL,
	"signer" text NOT NULL,
	"nonce" integer NOT NULL,
	"tx_hash" text NOT NULL,
	"raw_tx" text NOT NULL,
	"deposit_ids" uuid[] NOT NULL,
	"status" text DEFAULT 'signed' NOT NULL,
	"gas_used" numeric(78, 0),
	"effective_gas_price" numeric(78, 0),
	"block_number" numeric(78, 0),
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "vault_sweeps_tx_hash_unique" UNIQUE("tx_hash")
);
--> statement-breakpoint
CREATE TABLE "vault_deposits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"vault_id" uuid NOT NULL,
	"merchant_id" uuid NOT NULL,
	"vault_user_id" uuid NOT NULL,
	"chain_id" integer NOT NULL,
	"address" text NOT NULL,
	"payout" text NOT NULL,
	"token_address" text NOT NULL,
	"token_symbol" text NOT NULL,
	"token_decimals" integer,
	"amount" numeric(78, 0) NOT NULL,
	"fee" numeric(78, 0) DEFAULT '0' NOT NULL,
	"net_amount" numeric(78, 0) NOT NULL,
	"status" text DEFAULT 'detected' NOT NULL,
	"hold" text,
	"recover_requested_at" timestamp with time zone,
	"transfer_id" text NOT NULL,
	"deposit_tx_hash" text NOT NULL,
	"block_number" numeric(78, 0) NOT NULL,
	"log_index" integer NOT NULL,
	"sweep_id" uuid,
	"process_tx_hash" text,
	"processed_at" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "vault_deposits_transfer_id_unique" UNIQUE("transfer_id")
);
--> statement-breakpoint
CREATE TABLE "vault_deposit_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"deposit_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "vault_users" ADD CONSTRAINT "vault_users_vault_id_vault_configs_id_fk" FOREIGN KEY ("vault_id") REFERENCES "public"."vault_configs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vault_users" ADD CONSTRAINT "vault_users_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vault_deposits" ADD CONSTRAINT "vault_deposits_vault_id_vault_configs_id_fk" FOREIGN KEY ("vault_id") REFERENCES "public"."vault_configs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vault_deposits" ADD CONSTRAINT "vault_deposits_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vault_deposits" ADD CONSTRAINT "vault_deposits_vault_user_id_vault_users_id_fk" FOREIGN KEY ("vault_user_id") REFERENCES "public"."vault_users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vault_deposits" ADD CONSTRAINT "vault_deposits_sweep_id_vault_sweeps_id_fk" FOREIGN KEY ("sweep_id") REFERENCES "public"."vault_sweeps"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vault_deposit_events" ADD CONSTRAINT "vault_deposit_events_deposit_id_vault_deposits_id_fk" FOREIGN KEY ("deposit_id") REFERENCES "public"."vault_deposits"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "vault_users_identity_idx" ON "vault_users" USING btree ("vault_id","external_user_id","business_wallet","chain_id");--> statement-breakpoint
CREATE UNIQUE INDEX "vault_users_chain_address_idx" ON "vault_users" USING btree ("chain_id","address");--> statement-breakpoint
CREATE INDEX "vault_users_lookup_idx" ON "vault_users" USING btree ("vault_id","external_user_id","updated_at" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "vault_sweeps_signer_nonce_idx" ON "vault_sweeps" USING btree ("chain_id","signer","nonce");--> statement-breakpoint
CREATE INDEX "vault_sweeps_chain_status_idx" ON "vault_sweeps" USING btree ("chain_id","status");--> statement-breakpoint
CREATE INDEX "vault_deposits_vault_created_idx" ON "vault_deposits" USING btree ("vault_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "vault_deposits_user_idx" ON "vault_deposits" USING btree ("vault_user_id");--> statement-breakpoint
CREATE INDEX "vault_deposits_open_idx" ON "vault_deposits" USING btree ("chain_id","address","token_address") WHERE status <> 'completed';--> statement-breakpoint
CREATE INDEX "vault_deposits_trigger_idx" ON "vault_deposits" USING btree ("chain_id","created_at") WHERE status IN ('detected', 'failed') AND (hold IS NULL OR recover_requested_at IS NOT NULL);--> statement-breakpoint
CREATE INDEX "vault_deposits_sweep_idx" ON "vault_deposits" USING btree ("sweep_id");--> statement-breakpoint
CREATE INDEX "vault_deposit_events_deposit_idx" ON "vault_deposit_events" USING btree ("deposit_id");
