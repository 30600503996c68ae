import { sql } from "drizzle-orm";
import { integer, primaryKey, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { ts } from "../../db/columns.js";
import { merchants } from "../merchants/schema.js";

// The terminals module's tables: only this module writes them (other modules read them through its index.ts).

export const terminals = pgTable(
  "terminals",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    code: text("code").notNull(),
    name: text("name").notNull(),
    /** Where the terminal's payments settle (the payment's `merchant`); a POS sale needs it. */
    payoutAddress: text("payout_address"),
    defaultChainId: integer("default_chain_id"),
    /** Lowercase token address on the default chain (zero address: native coin). */
    defaultToken: text("default_token"),
    /** `chainId:lowercaseAddress` entries the cashier may charge in; empty = only the default. */
    allowedTokens: text("allowed_tokens")
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    createdAt: ts("created_at").notNull().defaultNow(),
    deletedAt: ts("deleted_at"),
  },
  (t) => [
    uniqueIndex("terminals_merchant_code_idx")
      .on(t.merchantId, t.code)
      .where(sql`deleted_at is null`),
  ],
);

/**
 * Cashiers of a merchant: the `{CASHIER}` of a POS orderId is `code`. The PIN (8+ digits) is kept only as
 * HMAC-SHA256 under HASH_SECRET, keyed by merchant: deterministic, so a PIN is unique per merchant and a POS
 * login finds its cashier by the PIN alone, yet useless without the server's secret.
 */
export const cashiers = pgTable(
  "cashiers",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    name: text("name").notNull(),
    code: text("code").notNull(),
    pinHash: text("pin_hash").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
    deletedAt: ts("deleted_at"),
  },
  (t) => [
    uniqueIndex("cashiers_merchant_code_idx")
      .on(t.merchantId, t.code)
      .where(sql`deleted_at is null`),
    uniqueIndex("cashiers_merchant_pin_idx")
      .on(t.merchantId, t.pinHash)
      .where(sql`deleted_at is null`),
  ],
);

/** Which cashiers may sell on which terminal. */
export const terminalCashiers = pgTable(
  "terminal_cashiers",
  {
    terminalId: uuid("terminal_id")
      .notNull()
      .references(() => terminals.id),
    cashierId: uuid("cashier_id")
      .notNull()
      .references(() => cashiers.id),
  },
  (t) => [primaryKey({ columns: [t.terminalId, t.cashierId] })],
);

/** A cashier signed in on a terminal's POS page (cookie holds the token; only its SHA-256 is stored). */
export const posSessions = pgTable("pos_sessions", {
  id: uuid("id").primaryKey().defaultRandom(),
  terminalId: uuid("terminal_id")
    .notNull()
    .references(() => terminals.id),
  cashierId: uuid("cashier_id")
    .notNull()
    .references(() => cashiers.id),
  tokenHash: text("token_hash").notNull().unique(),
  createdAt: ts("created_at").notNull().defaultNow(),
  expiresAt: ts("expires_at").notNull(),
});
