-- Sanctions screening (docs/sanctions.md, modules/sanctions). A payment, a recovery of unexpected funds or a vault
-- deposit whose sender a sanctions source flags is held: one `sanctions_holds` row per held subject (the positive
-- screening result, kept for audit: the address, the source that flagged it, the status it was taken from),
-- resolved by the operator (`released`: it settles; `rejected`: it never settles here, and no funds move) or by the
-- system (`dropped`: the held vault deposit's transfer was rolled back by a re-org). Every decision is a
-- `sanctions_actions` row, written in the transaction that moves the subject. A subject whose screening could not
-- finish (a source that cannot answer, a native-coin sender that cannot be identified) waits with a backoff in
-- `sanctions_screenings`. Vault deposits get the extension status `held`.
CREATE TABLE "sanctions_holds" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"subject" text NOT NULL,
	"payment_id" uuid,
	"recovery_id" uuid,
	"deposit_id" uuid,
	"chain_id" integer NOT NULL,
	"address" text NOT NULL,
	"source" text NOT NULL,
	"from_status" text NOT NULL,
	"status" text DEFAULT 'held' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp with time zone,
	CONSTRAINT "sanctions_holds_subject" CHECK ((subject = 'payment' AND payment_id IS NOT NULL AND recovery_id IS NULL AND deposit_id IS NULL) OR (subject = 'recovery' AND recovery_id IS NOT NULL AND payment_id IS NOT NULL AND deposit_id IS NULL) OR (subject = 'vault_deposit' AND deposit_id IS NOT NULL AND payment_id IS NULL AND recovery_id IS NULL)),
	CONSTRAINT "sanctions_holds_status" CHECK (status IN ('held', 'released', 'rejected', 'dropped')),
	CONSTRAINT "sanctions_holds_address_lowercase" CHECK (address = lower(address))
);
--> statement-breakpoint
ALTER TABLE "sanctions_holds" ADD CONSTRAINT "sanctions_holds_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "sanctions_holds" ADD CONSTRAINT "sanctions_holds_recovery_id_fund_recoveries_id_fk" FOREIGN KEY ("recovery_id") REFERENCES "public"."fund_recoveries"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "sanctions_holds" ADD CONSTRAINT "sanctions_holds_deposit_id_vault_deposits_id_fk" FOREIGN KEY ("deposit_id") REFERENCES "public"."vault_deposits"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "sanctions_holds_open_payment_idx" ON "sanctions_holds" USING btree ("payment_id") WHERE status = 'held' AND subject = 'payment';
--> statement-breakpoint
CREATE UNIQUE INDEX "sanctions_holds_open_recovery_idx" ON "sanctions_holds" USING btree ("recovery_id") WHERE status = 'held' AND recovery_id IS NOT NULL;
--> statement-breakpoint
CREATE UNIQUE INDEX "sanctions_holds_open_deposit_idx" ON "sanctions_holds" USING btree ("deposit_id") WHERE status = 'held' AND deposit_id IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "sanctions_holds_payment_idx" ON "sanctions_holds" USING btree ("payment_id") WHERE payment_id IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "sanctions_holds_deposit_idx" ON "sanctions_holds" USING btree ("deposit_id") WHERE deposit_id IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "sanctions_holds_held_idx" ON "sanctions_holds" USING btree ("created_at") WHERE status = 'held';
--> statement-breakpoint
CREATE TABLE "sanctions_actions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"hold_id" uuid NOT NULL,
	"action" text NOT NULL,
	"actor" text NOT NULL,
	"reason" text NOT NULL,
	"subject_from" text NOT NULL,
	"subject_to" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sanctions_actions_action" CHECK (action IN ('release', 'reject', 'drop')),
	CONSTRAINT "sanctions_actions_reason" CHECK (length(btrim(reason)) > 0),
	CONSTRAINT "sanctions_actions_actor" CHECK (length(btrim(actor)) > 0)
);
--> statement-breakpoint
ALTER TABLE "sanctions_actions" ADD CONSTRAINT "sanctions_actions_hold_id_sanctions_holds_id_fk" FOREIGN KEY ("hold_id") REFERENCES "public"."sanctions_holds"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "sanctions_actions_hold_idx" ON "sanctions_actions" USING btree ("hold_id");
--> statement-breakpoint
CREATE TABLE "sanctions_screenings" (
	"subject" text NOT NULL,
	"subject_id" uuid NOT NULL,
	"payment_id" uuid NOT NULL,
	"chain_id" integer NOT NULL,
	"kind" text NOT NULL,
	"reason" text NOT NULL,
	"attempts" integer DEFAULT 1 NOT NULL,
	"first_at" timestamp with time zone NOT NULL,
	"last_at" timestamp with time zone NOT NULL,
	"retry_at" timestamp with time zone NOT NULL,
	CONSTRAINT "sanctions_screenings_pk" PRIMARY KEY ("subject", "subject_id"),
	CONSTRAINT "sanctions_screenings_subject" CHECK (subject IN ('payment', 'recovery')),
	CONSTRAINT "sanctions_screenings_kind" CHECK (kind IN ('unavailable', 'unidentified'))
);
--> statement-breakpoint
ALTER TABLE "sanctions_screenings" ADD CONSTRAINT "sanctions_screenings_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "sanctions_screenings_payment_idx" ON "sanctions_screenings" USING btree ("payment_id");
