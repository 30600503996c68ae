CREATE TABLE "watched_addresses" (
	"chain_id" integer NOT NULL,
	"address" text NOT NULL,
	"kind" text NOT NULL,
	"owner_id" text NOT NULL,
	"merchant_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "watched_addresses_chain_id_address_pk" PRIMARY KEY("chain_id","address"),
	CONSTRAINT "watched_addresses_address_lowercase" CHECK (address = lower(address))
);
--> statement-breakpoint
ALTER TABLE "watched_addresses" ADD CONSTRAINT "watched_addresses_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Every insert path notifies the indexer at commit (src/watched-addresses.ts LISTENs). Created in the app schema (search_path).
CREATE FUNCTION "watched_addresses_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('watched_addresses', NEW.chain_id || ':' || NEW.address);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "watched_addresses_notify" AFTER INSERT ON "watched_addresses" FOR EACH ROW EXECUTE FUNCTION "watched_addresses_notify"();
--> statement-breakpoint
-- Addresses handed out before the registry existed. After the trigger, so an indexer already listening learns them too.
INSERT INTO "watched_addresses" ("chain_id", "address", "kind", "owner_id", "merchant_id", "created_at")
SELECT "chain_id", lower("recipient_address"), 'payment', "id"::text, "merchant_id", "created_at" FROM "payments"
ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO "watched_addresses" ("chain_id", "address", "kind", "owner_id", "merchant_id", "created_at")
SELECT "chain_id", lower("address"), 'gas_tank', "merchant_id"::text, "merchant_id", "created_at" FROM "gas_tank_addresses"
ON CONFLICT DO NOTHING;
