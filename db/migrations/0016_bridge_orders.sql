CREATE TABLE "bridge_order_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"order_id" text NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "bridge_orders" (
	"id" text PRIMARY KEY NOT NULL,
	"payment_id" uuid NOT NULL,
	"src_chain_id" integer NOT NULL,
	"src_token" text NOT NULL,
	"src_amount" numeric(78, 0) NOT NULL,
	"payer" text NOT NULL,
	"dst_chain_id" integer NOT NULL,
	"dst_token" text NOT NULL,
	"take_amount" numeric(78, 0) NOT NULL,
	"status" text DEFAULT 'quoted' NOT NULL,
	"provider_status" text,
	"create_tx_hash" text,
	"reported_at" timestamp with time zone,
	"checked_at" timestamp with time zone,
	"cancel_tx_hash" text,
	"cancel_raw_tx" text,
	"cancel_nonce" integer,
	"cancel_tx_status" text,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "bridge_order_events" ADD CONSTRAINT "bridge_order_events_order_id_bridge_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."bridge_orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bridge_orders" ADD CONSTRAINT "bridge_orders_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "bridge_order_events_order_idx" ON "bridge_order_events" USING btree ("order_id");--> statement-breakpoint
CREATE INDEX "bridge_orders_payment_idx" ON "bridge_orders" USING btree ("payment_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "bridge_orders_live_idx" ON "bridge_orders" USING btree ("status","reported_at") WHERE status IN ('created', 'fulfilled', 'cancel_sent');