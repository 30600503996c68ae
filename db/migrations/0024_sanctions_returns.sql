-- Held funds returned (docs/sanctions.md, "Returning held funds"): the operator sends a held payment's, recovery's or
-- vault deposit's funds to an address of their choice with the factory owner's key (`sanctions return`,
-- WalletFactory.returnFunds), an exact amount. One row per return transaction, written with its signed bytes in the
-- transaction that takes its nonce (chains/tx-sender.ts), so a crash never signs twice: signed -> sent -> mined ->
-- completed (at the chain's finality depth and indexed: the hold becomes `returned`, the subject moves), or reverted /
-- dropped (nothing moved; the hold stays as it was). At most one open return per hold.
CREATE TABLE "sanctions_returns" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"hold_id" uuid NOT NULL,
	"chain_id" integer NOT NULL,
	"wallet" text NOT NULL,
	"token" text NOT NULL,
	"to_address" text NOT NULL,
	"amount_units" numeric(78, 0) NOT NULL,
	"licence" text,
	"actor" text NOT NULL,
	"reason" text NOT NULL,
	"status" text DEFAULT 'signed' NOT NULL,
	"signer" text NOT NULL,
	"nonce" integer NOT NULL,
	"tx_hash" text NOT NULL,
	"raw_tx" text NOT NULL,
	"block_number" numeric(78, 0),
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sanctions_returns_tx_hash_unique" UNIQUE("tx_hash"),
	CONSTRAINT "sanctions_returns_status" CHECK (status IN ('signed', 'sent', 'mined', 'completed', 'reverted', 'dropped')),
	CONSTRAINT "sanctions_returns_amount_positive" CHECK (amount_units > 0),
	CONSTRAINT "sanctions_returns_lowercase" CHECK (wallet = lower(wallet) AND token = lower(token) AND to_address = lower(to_address) AND signer = lower(signer)),
	CONSTRAINT "sanctions_returns_reason" CHECK (length(btrim(reason)) > 0),
	CONSTRAINT "sanctions_returns_actor" CHECK (length(btrim(actor)) > 0)
);
--> statement-breakpoint
ALTER TABLE "sanctions_returns" ADD CONSTRAINT "sanctions_returns_hold_id_sanctions_holds_id_fk" FOREIGN KEY ("hold_id") REFERENCES "public"."sanctions_holds"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "sanctions_returns_open_idx" ON "sanctions_returns" USING btree ("hold_id") WHERE status IN ('signed', 'sent', 'mined');
--> statement-breakpoint
CREATE INDEX "sanctions_returns_chain_open_idx" ON "sanctions_returns" USING btree ("chain_id", "nonce") WHERE status IN ('signed', 'sent', 'mined');
--> statement-breakpoint
CREATE INDEX "sanctions_returns_hold_idx" ON "sanctions_returns" USING btree ("hold_id");
--> statement-breakpoint
ALTER TABLE "sanctions_holds" DROP CONSTRAINT "sanctions_holds_status";
--> statement-breakpoint
ALTER TABLE "sanctions_holds" ADD CONSTRAINT "sanctions_holds_status" CHECK (status IN ('held', 'released', 'rejected', 'dropped', 'returned'));
--> statement-breakpoint
ALTER TABLE "sanctions_actions" DROP CONSTRAINT "sanctions_actions_action";
--> statement-breakpoint
ALTER TABLE "sanctions_actions" ADD CONSTRAINT "sanctions_actions_action" CHECK (action IN ('release', 'reject', 'drop', 'return'));
