-- Agents (docs/agents.md): an account that refers merchants, charges them a markup within an operator-set cap and earns
-- a share of their platform fees. An agent is a merchant account of its own (its keys and dashboard login are its own).
CREATE TABLE "agents" (
	"merchant_id" uuid PRIMARY KEY NOT NULL,
	"referral_code" text NOT NULL,
	"markup_bps" integer DEFAULT 0 NOT NULL,
	"markup_cap_bps" integer NOT NULL,
	"platform_share_bps" integer NOT NULL,
	"payout_address" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agents_referral_code_unique" UNIQUE("referral_code"),
	CONSTRAINT "agents_markup_within_cap" CHECK (markup_bps >= 0 AND markup_bps <= markup_cap_bps),
	CONSTRAINT "agents_markup_cap_range" CHECK (markup_cap_bps >= 0 AND markup_cap_bps <= 10000),
	CONSTRAINT "agents_platform_share_range" CHECK (platform_share_bps >= 0 AND platform_share_bps <= 10000)
);
--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "agent_id" uuid;
--> statement-breakpoint
ALTER TABLE "merchants" ADD CONSTRAINT "merchants_agent_id_agents_merchant_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("merchant_id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "merchants" ADD CONSTRAINT "merchants_not_own_agent" CHECK (agent_id IS NULL OR agent_id <> id);
--> statement-breakpoint
CREATE INDEX "merchants_agent_idx" ON "merchants" USING btree ("agent_id") WHERE agent_id IS NOT NULL;
--> statement-breakpoint
-- The agent's terms as the payment was created: its markup (0 under the promotion) and its share of the platform fee.
ALTER TABLE "payments" ADD COLUMN "agent_id" uuid;
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "agent_fee_bps" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "agent_fee_units" numeric(78, 0) DEFAULT '0' NOT NULL;
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "agent_share_bps" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
CREATE INDEX "payments_agent_idx" ON "payments" USING btree ("agent_id", "merchant_id") WHERE agent_id IS NOT NULL AND status = 'completed';
--> statement-breakpoint
-- What an agent earned and withdrew, one row per movement: a completed payment adds its markup and platform share, a
-- withdrawal takes its amount, a failed withdrawal gives it back. `currency` is a token address (lowercase; the zero
-- address for the native coin) on `chain_id`, or `usd` (chain 0) for Gas Tank payments, whose fees are paid in USDT.
CREATE TABLE "agent_earnings" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"payment_id" uuid,
	"withdrawal_id" uuid,
	"chain_id" integer NOT NULL,
	"currency" text NOT NULL,
	"decimals" integer NOT NULL,
	"symbol" text NOT NULL,
	"units" numeric(78, 0) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_earnings_kind" CHECK (kind IN ('markup', 'platform_share', 'withdrawal', 'withdrawal_refund')),
	CONSTRAINT "agent_earnings_sign" CHECK ((kind = 'withdrawal' AND units < 0) OR (kind <> 'withdrawal' AND units > 0))
);
--> statement-breakpoint
ALTER TABLE "agent_earnings" ADD CONSTRAINT "agent_earnings_agent_id_agents_merchant_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("merchant_id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "agent_earnings" ADD CONSTRAINT "agent_earnings_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "agent_earnings_payment_kind_idx" ON "agent_earnings" USING btree ("payment_id", "kind") WHERE payment_id IS NOT NULL;
--> statement-breakpoint
CREATE UNIQUE INDEX "agent_earnings_withdrawal_kind_idx" ON "agent_earnings" USING btree ("withdrawal_id", "kind") WHERE withdrawal_id IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "agent_earnings_agent_idx" ON "agent_earnings" USING btree ("agent_id", "chain_id", "currency");
--> statement-breakpoint
-- A withdrawal of an agent's earnings to its payout address, sent by the transaction sender (processors/agent-payouts.ts).
CREATE TABLE "agent_withdrawals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"agent_id" uuid NOT NULL,
	"chain_id" integer NOT NULL,
	"currency" text NOT NULL,
	"token_address" text NOT NULL,
	"decimals" integer NOT NULL,
	"symbol" text NOT NULL,
	"units" numeric(78, 0) NOT NULL,
	"to_address" text NOT NULL,
	"status" text DEFAULT 'requested' NOT NULL,
	"signer" text,
	"nonce" integer,
	"tx_hash" text,
	"raw_tx" text,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_withdrawals_status" CHECK (status IN ('requested', 'signed', 'sent', 'paid', 'failed')),
	CONSTRAINT "agent_withdrawals_units" CHECK (units > 0)
);
--> statement-breakpoint
ALTER TABLE "agent_withdrawals" ADD CONSTRAINT "agent_withdrawals_agent_id_agents_merchant_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("merchant_id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "agent_withdrawals_live_idx" ON "agent_withdrawals" USING btree ("chain_id", "created_at") WHERE status IN ('requested', 'signed', 'sent');
--> statement-breakpoint
CREATE INDEX "agent_withdrawals_agent_idx" ON "agent_withdrawals" USING btree ("agent_id", "created_at");
