-- Every status change of an agent withdrawal, a Vault sweep and a settlement, written by its table's transition()
-- (modules/agents/transition.ts, modules/vault/transition.ts, modules/settlement/transition.ts) in the transaction of
-- the change.
CREATE TABLE "agent_withdrawal_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"withdrawal_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vault_sweep_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"sweep_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "settlement_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"settlement_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_withdrawal_events" ADD CONSTRAINT "agent_withdrawal_events_withdrawal_id_agent_withdrawals_id_fk" FOREIGN KEY ("withdrawal_id") REFERENCES "public"."agent_withdrawals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vault_sweep_events" ADD CONSTRAINT "vault_sweep_events_sweep_id_vault_sweeps_id_fk" FOREIGN KEY ("sweep_id") REFERENCES "public"."vault_sweeps"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "settlement_events" ADD CONSTRAINT "settlement_events_settlement_id_settlements_id_fk" FOREIGN KEY ("settlement_id") REFERENCES "public"."settlements"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_withdrawal_events_withdrawal_idx" ON "agent_withdrawal_events" USING btree ("withdrawal_id");--> statement-breakpoint
CREATE INDEX "vault_sweep_events_sweep_idx" ON "vault_sweep_events" USING btree ("sweep_id");--> statement-breakpoint
CREATE INDEX "settlement_events_settlement_idx" ON "settlement_events" USING btree ("settlement_id");
