CREATE TABLE "gas_tank_addresses" (
	"chain_id" integer NOT NULL,
	"address" text NOT NULL,
	"merchant_id" uuid NOT NULL,
	"salt" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "gas_tank_addresses" ADD CONSTRAINT "gas_tank_addresses_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "gas_tank_addresses_chain_address_idx" ON "gas_tank_addresses" USING btree ("chain_id","address");--> statement-breakpoint
CREATE UNIQUE INDEX "gas_tank_addresses_merchant_chain_idx" ON "gas_tank_addresses" USING btree ("merchant_id","chain_id");