CREATE TABLE "vault_wallets" (
	"wallet_address" text PRIMARY KEY NOT NULL,
	"merchant_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "vault_wallets_address_lowercase" CHECK (wallet_address = lower(wallet_address))
);
--> statement-breakpoint
ALTER TABLE "vault_deposits" ALTER COLUMN "deposit_tx_hash" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "vault_wallets" ADD CONSTRAINT "vault_wallets_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- A wallet belongs to the merchant whose vault used it first (vault configs and the wallets their users commit to).
INSERT INTO "vault_wallets" ("wallet_address", "merchant_id", "created_at")
SELECT DISTINCT ON (w) w, merchant_id, created_at FROM (
  SELECT lower(wallet_address) AS w, merchant_id, created_at FROM "vault_configs"
  UNION ALL SELECT business_wallet, merchant_id, created_at FROM "vault_users"
) x ORDER BY w, created_at ON CONFLICT DO NOTHING;
