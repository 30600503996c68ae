import { sql } from "drizzle-orm";
import { type AnyPgColumn, check, index, integer, primaryKey, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { ts, units } from "../../db/columns.js";
import { agents } from "../agents/schema.js";

// The merchants module's tables: only this module writes them (other modules read them through its index.ts).

export const merchants = pgTable(
  "merchants",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    name: text("name").notNull(),
    email: text("email").unique(),
    /** Dashboard password: argon2id PHC string (older rows: `scrypt$…`, replaced at login); null = no dashboard login. */
    passwordHash: text("password_hash"),
    /** `direct` (1%), `member` (0%, no promotion) or `partner` (custom 0.25-1%). */
    merchantType: text("merchant_type").notNull().default("direct"),
    platformFeeBps: integer("platform_fee_bps").notNull().default(100),
    /** Completed transactions that used the free-fee promotion (max 30). */
    promoUsed: integer("promo_used").notNull().default(0),
    /** Dashboard warns when the Gas Tank holds less than this (USDT micro-units); null = no alert. */
    gasTankAlertMicros: units("gas_tank_alert_micros"),
    /** Underpayment tolerance in basis points of the amount due, 0..500 (docs/payments.md "Underpayment tolerance"; migration 0022). */
    underpaymentToleranceBps: integer("underpayment_tolerance_bps").notNull().default(0),
    /** The agent that referred this merchant (agents.merchant_id; migration 0018). */
    agentId: uuid("agent_id").references((): AnyPgColumn => agents.merchantId),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    check("merchants_underpayment_tolerance_bps_range", sql`underpayment_tolerance_bps BETWEEN 0 AND 500`),
    check("merchants_not_own_agent", sql`agent_id IS NULL OR agent_id <> id`),
    index("merchants_agent_idx")
      .on(t.agentId)
      .where(sql`agent_id IS NOT NULL`),
  ],
);

/** A merchant's absolute underpayment tolerance per chain and token, smallest units (migration 0022). */
export const underpaymentToleranceAmounts = pgTable(
  "underpayment_tolerance_amounts",
  {
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    chainId: integer("chain_id").notNull(),
    /** Lowercase; the zero address for the native coin. */
    tokenAddress: text("token_address").notNull(),
    tokenSymbol: text("token_symbol").notNull(),
    tokenDecimals: integer("token_decimals").notNull(),
    units: units("units").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "underpayment_tolerance_amounts_pk", columns: [t.merchantId, t.chainId, t.tokenAddress] }),
    check("underpayment_tolerance_amounts_address_lowercase", sql`token_address = lower(token_address)`),
    check("underpayment_tolerance_amounts_units_positive", sql`units > 0`),
  ],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    name: text("name").notNull().default("default"),
    /** First characters, shown to tell keys apart. */
    prefix: text("prefix").notNull(),
    /** SHA-256 hex of the whole key; the key itself is never stored. */
    keyHash: text("key_hash").notNull().unique(),
    createdAt: ts("created_at").notNull().defaultNow(),
    lastUsedAt: ts("last_used_at"),
    revokedAt: ts("revoked_at"),
    /** A rolled key keeps working until then (the overlap period), then is refused like a revoked one. */
    expiresAt: ts("expires_at"),
  },
  (t) => [index("api_keys_merchant_idx").on(t.merchantId)],
);

export const sessions = pgTable("sessions", {
  id: uuid("id").primaryKey().defaultRandom(),
  merchantId: uuid("merchant_id")
    .notNull()
    .references(() => merchants.id),
  tokenHash: text("token_hash").notNull().unique(),
  createdAt: ts("created_at").notNull().defaultNow(),
  expiresAt: ts("expires_at").notNull(),
});

/** Failed dashboard logins per account (hashed e-mail) and per client address (modules/merchants/login-throttle.ts). */
export const loginAttempts = pgTable("login_attempts", {
  /** `account:<sha256 of the lowercased e-mail>` or `address:<address or IPv6 /64>`. */
  key: text("key").primaryKey(),
  failures: integer("failures").notNull(),
  lastFailureAt: ts("last_failure_at").notNull(),
  /** No attempt is checked before this time. */
  lockedUntil: ts("locked_until"),
});
