CREATE TABLE "cashiers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"merchant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"code" text NOT NULL,
	"pin_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "pos_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"terminal_id" uuid NOT NULL,
	"cashier_id" uuid NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "pos_sessions_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "terminal_cashiers" (
	"terminal_id" uuid NOT NULL,
	"cashier_id" uuid NOT NULL,
	CONSTRAINT "terminal_cashiers_terminal_id_cashier_id_pk" PRIMARY KEY("terminal_id","cashier_id")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "gas_tank_alert_micros" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "terminals" ADD COLUMN "payout_address" text;--> statement-breakpoint
ALTER TABLE "terminals" ADD COLUMN "default_chain_id" integer;--> statement-breakpoint
ALTER TABLE "terminals" ADD COLUMN "default_token" text;--> statement-breakpoint
ALTER TABLE "terminals" ADD COLUMN "allowed_tokens" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "cashiers" ADD CONSTRAINT "cashiers_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pos_sessions" ADD CONSTRAINT "pos_sessions_terminal_id_terminals_id_fk" FOREIGN KEY ("terminal_id") REFERENCES "public"."terminals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pos_sessions" ADD CONSTRAINT "pos_sessions_cashier_id_cashiers_id_fk" FOREIGN KEY ("cashier_id") REFERENCES "public"."cashiers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "terminal_cashiers" ADD CONSTRAINT "terminal_cashiers_terminal_id_terminals_id_fk" FOREIGN KEY ("terminal_id") REFERENCES "public"."terminals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "terminal_cashiers" ADD CONSTRAINT "terminal_cashiers_cashier_id_cashiers_id_fk" FOREIGN KEY ("cashier_id") REFERENCES "public"."cashiers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "cashiers_merchant_code_idx" ON "cashiers" USING btree ("merchant_id","code") WHERE deleted_at is null;--> statement-breakpoint
CREATE UNIQUE INDEX "cashiers_merchant_pin_idx" ON "cashiers" USING btree ("merchant_id","pin_hash") WHERE deleted_at is null;