CREATE TABLE "webhook_delivery_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delivery_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sanctions_hold_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"hold_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sanctions_return_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"return_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "webhook_delivery_events" ADD CONSTRAINT "webhook_delivery_events_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sanctions_hold_events" ADD CONSTRAINT "sanctions_hold_events_hold_id_sanctions_holds_id_fk" FOREIGN KEY ("hold_id") REFERENCES "public"."sanctions_holds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sanctions_return_events" ADD CONSTRAINT "sanctions_return_events_return_id_sanctions_returns_id_fk" FOREIGN KEY ("return_id") REFERENCES "public"."sanctions_returns"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_delivery_events_delivery_idx" ON "webhook_delivery_events" USING btree ("delivery_id");--> statement-breakpoint
CREATE INDEX "sanctions_hold_events_hold_idx" ON "sanctions_hold_events" USING btree ("hold_id");--> statement-breakpoint
CREATE INDEX "sanctions_return_events_return_idx" ON "sanctions_return_events" USING btree ("return_id");