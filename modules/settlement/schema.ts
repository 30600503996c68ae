import { index, integer, numeric, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { statusEvents, ts } from "../../db/columns.js";

// The settlement module's tables: only this module writes them (other modules read them through its index.ts).

/** On-chain sweep transactions sent by the settler: written (signed) before broadcast so a crash never forgets one. */
export const settlements = pgTable(
  "settlements",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    chainId: integer("chain_id").notNull(),
    signer: text("signer").notNull(),
    nonce: integer("nonce").notNull(),
    txHash: text("tx_hash").notNull().unique(),
    rawTx: text("raw_tx").notNull(),
    paymentIds: uuid("payment_ids").array().notNull(),
    status: text("status").notNull().default("signed"), // signed | sent | mined | reverted | dropped
    gasUsed: numeric("gas_used", { precision: 78, scale: 0 }),
    effectiveGasPrice: numeric("effective_gas_price", { precision: 78, scale: 0 }),
    /** An OP-stack chain's L1 data fee of the mined transaction, in wei, from its receipt (null: none reported). */
    l1Fee: numeric("l1_fee", { precision: 78, scale: 0 }),
    blockNumber: numeric("block_number", { precision: 78, scale: 0 }),
    error: text("error"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("settlements_signer_nonce_idx").on(t.chainId, t.signer, t.nonce),
    index("settlements_status_idx").on(t.status),
    // "Which sweeps carry this payment" (settlement send, payment detail): `payment_ids @> ARRAY[$1]::uuid[]`.
    index("settlements_payment_ids_idx").using("gin", t.paymentIds),
  ],
);

/** Every status change of a settlement transaction, for audit (modules/settlement/transition.ts). */
export const settlementEvents = statusEvents("settlement_events", { column: "settlement_id", references: () => settlements.id });
