CREATE TABLE "vault_configs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"public_id" text NOT NULL,
	"merchant_id" uuid NOT NULL,
	"api_key_id" uuid NOT NULL,
	"business_name" text NOT NULL,
	"wallet_address" text NOT NULL,
	"fee_bps" integer DEFAULT 25 NOT NULL,
	"fee_recipient" text,
	"fee_registered_at" timestamp with time zone,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "vault_configs_public_id_unique" UNIQUE("public_id"),
	CONSTRAINT "vault_configs_api_key_id_unique" UNIQUE("api_key_id"),
	CONSTRAINT "vault_configs_fee_bps_range" CHECK (fee_bps BETWEEN 0 AND 100)
);
--> statement-breakpoint
CREATE TABLE "vault_tokens" (
	"vault_id" uuid NOT NULL,
	"chain_id" integer NOT NULL,
	"token_address" text NOT NULL,
	"token_symbol" text NOT NULL,
	"decimals" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "vault_tokens_vault_id_chain_id_token_address_pk" PRIMARY KEY("vault_id","chain_id","token_address"),
	CONSTRAINT "vault_tokens_address_lowercase" CHECK (token_address = lower(token_address))
);
--> statement-breakpoint
ALTER TABLE "vault_configs" ADD CONSTRAINT "vault_configs_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vault_configs" ADD CONSTRAINT "vault_configs_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vault_tokens" ADD CONSTRAINT "vault_tokens_vault_id_vault_configs_id_fk" FOREIGN KEY ("vault_id") REFERENCES "public"."vault_configs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "vault_configs_merchant_idx" ON "vault_configs" USING btree ("merchant_id");--> statement-breakpoint
-- Vault webhooks move from one per merchant to one per vault. Before this migration no vault existed (every
-- /vault/v1 route answered 404), so no merchant-keyed row was reachable: they are dropped, not guessed at.
DELETE FROM "vault_webhook_configs";--> statement-breakpoint
ALTER TABLE "vault_webhook_configs" DROP CONSTRAINT "vault_webhook_configs_merchant_id_unique";--> statement-breakpoint
ALTER TABLE "vault_webhook_configs" ADD COLUMN "vault_id" uuid NOT NULL;--> statement-breakpoint
ALTER TABLE "vault_webhook_configs" ADD CONSTRAINT "vault_webhook_configs_vault_id_unique" UNIQUE("vault_id");--> statement-breakpoint
ALTER TABLE "vault_webhook_configs" ADD CONSTRAINT "vault_webhook_configs_vault_id_vault_configs_id_fk" FOREIGN KEY ("vault_id") REFERENCES "public"."vault_configs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "vault_id" uuid;
