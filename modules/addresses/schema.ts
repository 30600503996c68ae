import { sql } from "drizzle-orm";
import { check, integer, primaryKey, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { ts } from "../../db/columns.js";
import { merchants } from "../merchants/schema.js";

// The addresses module's tables: only this module writes them (other modules read them through its index.ts).

/**
 * Every address we hand out, per chain (payment recipients, Gas Tank deposit addresses; later vault users and
 * bridge orders), registered in the transaction that creates it (modules/addresses/registry.ts). The indexer keeps a
 * Transfer only when `to` or `from` is here: a trigger NOTIFYs `watched_addresses` with `chainId:address` at commit.
 * The trigger and its function are in migration 0006 only (drizzle cannot declare them; test/db/migrations.test.ts).
 */
export const watchedAddresses = pgTable(
  "watched_addresses",
  {
    chainId: integer("chain_id").notNull(),
    /** Lowercase hex, as the indexer compares it. */
    address: text("address").notNull(),
    /** `payment` | `gas_tank` (later `vault`, `bridge`). */
    kind: text("kind").notNull(),
    /** What the address belongs to: the payment id, the merchant id for a Gas Tank address. */
    ownerId: text("owner_id").notNull(),
    merchantId: uuid("merchant_id").references(() => merchants.id),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.address] }), check("watched_addresses_address_lowercase", sql`address = lower(address)`)],
);
