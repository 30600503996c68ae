ALTER TABLE "bridge_orders" ADD COLUMN "refund_token" text;--> statement-breakpoint
ALTER TABLE "bridge_orders" ADD COLUMN "refund_symbol" text;--> statement-breakpoint
ALTER TABLE "bridge_orders" ADD COLUMN "refund_decimals" integer;--> statement-breakpoint
ALTER TABLE "bridge_orders" ADD COLUMN "refund_units" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "bridge_orders" ADD COLUMN "refund_fee_units" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "bridge_orders" ADD COLUMN "refund_to" text;