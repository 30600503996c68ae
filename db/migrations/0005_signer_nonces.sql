CREATE TABLE "signer_nonces" (
	"chain_id" integer NOT NULL,
	"signer" text NOT NULL,
	"next_nonce" integer NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "signer_nonces_chain_id_signer_pk" PRIMARY KEY("chain_id","signer")
);
--> statement-breakpoint
-- Deployments that already signed settlements go on from the nonces those hold.
INSERT INTO "signer_nonces" ("chain_id", "signer", "next_nonce")
SELECT "chain_id", "signer", max("nonce") + 1 FROM "settlements" WHERE "status" <> 'dropped' GROUP BY "chain_id", "signer";
