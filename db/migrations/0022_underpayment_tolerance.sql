-- Underpayment tolerance (README "Underpayment tolerance", modules/payments/tolerance.ts). A merchant may accept a
-- payment that arrives a little short (exchanges deduct their withdrawal fee from what the payer sends): a share of the
-- amount due in basis points (at most 500, 5 %) and/or an absolute amount per chain and token, in smallest units.
-- Default 0 and none: the spec's behaviour. The tolerance is computed once, at creation, and kept on the payment
-- (`underpayment_tolerance_units`): a payment's terms do not change after the payer has seen them. The shortfall of a
-- payment accepted short is recorded in `underpayment_units` (the webhook's `underpayment`, beside `overpayment`).
ALTER TABLE "merchants" ADD COLUMN "underpayment_tolerance_bps" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE "merchants" ADD CONSTRAINT "merchants_underpayment_tolerance_bps_range" CHECK (underpayment_tolerance_bps BETWEEN 0 AND 500);
--> statement-breakpoint
CREATE TABLE "underpayment_tolerance_amounts" (
	"merchant_id" uuid NOT NULL,
	"chain_id" integer NOT NULL,
	"token_address" text NOT NULL,
	"token_symbol" text NOT NULL,
	"token_decimals" integer NOT NULL,
	"units" numeric(78, 0) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "underpayment_tolerance_amounts_pk" PRIMARY KEY("merchant_id","chain_id","token_address"),
	CONSTRAINT "underpayment_tolerance_amounts_address_lowercase" CHECK (token_address = lower(token_address)),
	CONSTRAINT "underpayment_tolerance_amounts_units_positive" CHECK (units > 0)
);
--> statement-breakpoint
ALTER TABLE "underpayment_tolerance_amounts" ADD CONSTRAINT "underpayment_tolerance_amounts_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "underpayment_tolerance_units" numeric(78, 0) DEFAULT '0' NOT NULL;
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "underpayment_units" numeric(78, 0) DEFAULT '0' NOT NULL;
