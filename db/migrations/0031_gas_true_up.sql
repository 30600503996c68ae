ALTER TABLE "payments" ADD COLUMN "gas_fee_usd18" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "settlements" ADD COLUMN "l1_fee" numeric(78, 0);