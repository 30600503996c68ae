import { sql } from "drizzle-orm";
import { bigint, boolean, index, integer, jsonb, primaryKey, pgTable, text } from "drizzle-orm/pg-core";
import { ts, units } from "./columns.js";

// Tables of the foundation (no module owns them): the transaction sender's nonces and signed versions, processors' cursors
// (db/processor-state.ts). Each module's own tables are in modules/<m>/schema.ts; app.schema.ts gathers them all.

/**
 * The next nonce each of our signers takes on each chain, whatever the transaction is for (chains/tx-sender.ts
 * advances it under a per-signer advisory lock, in the transaction that stores the signed bytes).
 */
export const signerNonces = pgTable(
  "signer_nonces",
  {
    chainId: integer("chain_id").notNull(),
    signer: text("signer").notNull(),
    nextNonce: integer("next_nonce").notNull(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.signer] })],
);

/** Key/value state of processors (last scanned block per chain, etc.). */
export const processorState = pgTable("processor_state", {
  key: text("key").primaryKey(),
  value: jsonb("value").notNull(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/**
 * Every version the transaction sender signed of one (chain, signer, nonce): the first, then each replacement with
 * higher fees (chains/tx-sender.ts). Stored before broadcast. Exactly one version of a nonce can mine; `outcome` is
 * set on all of them once one has (or the nonce went to another transaction). The caller's own row (a settlement, a
 * withdrawal, …) keeps the first hash until the outcome names the one that mined.
 */
export const txVersions = pgTable(
  "tx_versions",
  {
    hash: text("hash").primaryKey(),
    chainId: integer("chain_id").notNull(),
    signer: text("signer").notNull(),
    nonce: integer("nonce").notNull(),
    version: integer("version").notNull(),
    rawTx: text("raw_tx").notNull(),
    maxFeePerGas: units("max_fee_per_gas").notNull(),
    maxPriorityFeePerGas: units("max_priority_fee_per_gas").notNull(),
    /** The head when it was signed: a version is replaced once it has waited the chain's blocks (registry `fees`). */
    signedBlock: bigint("signed_block", { mode: "bigint" }).notNull(),
    /** The latest version would need more than the chain's fee cap to be replaced: it waits at the cap. */
    atFeeCap: boolean("at_fee_cap").notNull().default(false),
    outcome: text("outcome"),
    createdAt: ts("created_at").notNull().defaultNow(),
    resolvedAt: ts("resolved_at"),
  },
  (t) => [
    index("tx_versions_nonce_idx").on(t.chainId, t.signer, t.nonce),
    // Health and metrics read the versions still waiting (few) per chain.
    index("tx_versions_pending_idx")
      .on(t.chainId, t.createdAt)
      .where(sql`outcome IS NULL`),
  ],
);
