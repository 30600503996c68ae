import { sql } from "drizzle-orm";
import { bigserial, index, integer, numeric, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { ts } from "../../db/columns.js";
import { merchants } from "../merchants/schema.js";
import { payments } from "../payments/schema.js";

// The gas-tank module's tables: only this module writes them (other modules read them through its index.ts).

/** Gas Tank ledger: USDT micro-units (6 decimals), signed. `reference` makes every entry idempotent. */
export const ledgerEntries = pgTable(
  "ledger_entries",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    kind: text("kind").notNull(), // gas_tank_deposit | gas_tank_reorg | settlement_fee | settlement_refund | settlement_gas | recovery_fee | recovery_refund | vault_sweep_fee | vault_sweep_refund | adjustment
    amountMicros: numeric("amount_micros", { precision: 78, scale: 0 }).notNull(),
    paymentId: uuid("payment_id").references(() => payments.id),
    chainId: integer("chain_id"),
    reference: text("reference").notNull().unique(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    index("ledger_merchant_idx").on(t.merchantId),
    // Recent Gas Tank credits, checked for re-orgs (gas-tank/credit.ts reverseReorgedDeposits).
    index("ledger_recent_deposits_idx")
      .on(t.chainId, t.createdAt)
      .where(sql`kind = 'gas_tank_deposit'`),
  ],
);

/** Each merchant's Gas Tank deposit address per chain (a counterfactual wallet paying the treasury). */
export const gasTankAddresses = pgTable(
  "gas_tank_addresses",
  {
    chainId: integer("chain_id").notNull(),
    address: text("address").notNull(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    salt: text("salt").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("gas_tank_addresses_chain_address_idx").on(t.chainId, t.address),
    uniqueIndex("gas_tank_addresses_merchant_chain_idx").on(t.merchantId, t.chainId),
  ],
);
