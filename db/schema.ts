import { integer, jsonb, primaryKey, pgTable, text } from "drizzle-orm/pg-core";
import { ts } from "./columns.js";

// Tables of the foundation (no module owns them): the transaction sender's nonces and processors' cursors
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
