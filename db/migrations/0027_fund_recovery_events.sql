-- Every status change of a recovery of unexpected funds, written by its transition() (modules/payments/transition.ts).
CREATE TABLE "fund_recovery_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"recovery_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "fund_recovery_events" ADD CONSTRAINT "fund_recovery_events_recovery_id_fund_recoveries_id_fk" FOREIGN KEY ("recovery_id") REFERENCES "public"."fund_recoveries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "fund_recovery_events_recovery_idx" ON "fund_recovery_events" USING btree ("recovery_id");