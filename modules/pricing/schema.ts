import { integer, primaryKey, pgTable, text } from "drizzle-orm/pg-core";
import { ts } from "../../db/columns.js";

// The pricing module's tables: only this module writes them (other modules read them through its index.ts).

/** Symbol and decimals of tokens outside the registry, read once from the contract (null: not readable as an ERC-20). */
export const tokenMetadata = pgTable(
  "token_metadata",
  {
    chainId: integer("chain_id").notNull(),
    /** Lowercase. */
    address: text("address").notNull(),
    symbol: text("symbol"),
    decimals: integer("decimals"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.address] })],
);
