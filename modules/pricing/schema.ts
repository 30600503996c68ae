import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, primaryKey, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { statusEvents, ts, units } from "../../db/columns.js";

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

/**
 * The price pusher's transactions (modules/pricing/pusher.ts): one `setPrices` on a chain's own PriceOracle, stored
 * signed before it is broadcast (chains/tx-sender.ts). `signed` -> `sent` -> `mined` or `reverted`; `dropped` when its
 * nonce went to another transaction; a mined one a re-org took away is `sent` again (its stored bytes). At most one
 * open (`signed`, `sent`) per chain. `prices`: symbol -> USD price with 18 decimals (a decimal string); `sources`:
 * symbol -> where it was read (`index`, `chainlink:<chainId>`). Addresses lowercase.
 */
export const oraclePushes = pgTable(
  "oracle_pushes",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    chainId: integer("chain_id").notNull(),
    oracle: text("oracle").notNull(),
    prices: jsonb("prices").$type<Record<string, string>>().notNull(),
    sources: jsonb("sources").$type<Record<string, string>>().notNull(),
    status: text("status").notNull().default("signed"), // signed | sent | mined | reverted | dropped
    signer: text("signer").notNull(),
    nonce: integer("nonce").notNull(),
    txHash: text("tx_hash").notNull().unique(),
    rawTx: text("raw_tx").notNull(),
    blockNumber: units("block_number"),
    error: text("error"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    check("oracle_pushes_status", sql`status IN ('signed', 'sent', 'mined', 'reverted', 'dropped')`),
    check("oracle_pushes_lowercase", sql`oracle = lower(oracle) AND signer = lower(signer)`),
    uniqueIndex("oracle_pushes_open_idx")
      .on(t.chainId)
      .where(sql`status IN ('signed', 'sent')`),
    index("oracle_pushes_chain_idx").on(t.chainId, t.createdAt),
  ],
);

/** oracle_pushes' audit rows, written by transitionPush (modules/pricing/push-transition.ts). */
export const oraclePushEvents = statusEvents("oracle_push_events", { column: "push_id", references: () => oraclePushes.id });
