-- Agent withdrawals are final only at depth (AGENT_PAYOUT_CONFIRMATIONS, default the chain's finality): `mined` and
-- `reverted` wait there before `paid`, or `failed` with the amount returned. A withdrawal the payout wallet could not
-- send is retried with a backoff (`attempts`, `next_attempt_at`), so it never holds up the others.
ALTER TABLE "agent_withdrawals" DROP CONSTRAINT "agent_withdrawals_status";
--> statement-breakpoint
ALTER TABLE "agent_withdrawals" ADD CONSTRAINT "agent_withdrawals_status" CHECK (status IN ('requested', 'signed', 'sent', 'mined', 'reverted', 'paid', 'failed'));
--> statement-breakpoint
ALTER TABLE "agent_withdrawals" ADD COLUMN "block_number" numeric(78, 0);
--> statement-breakpoint
ALTER TABLE "agent_withdrawals" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE "agent_withdrawals" ADD COLUMN "next_attempt_at" timestamp with time zone;
--> statement-breakpoint
DROP INDEX "agent_withdrawals_live_idx";
--> statement-breakpoint
CREATE INDEX "agent_withdrawals_live_idx" ON "agent_withdrawals" USING btree ("chain_id", "created_at") WHERE status IN ('requested', 'signed', 'sent', 'mined', 'reverted');
