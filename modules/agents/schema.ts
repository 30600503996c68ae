import { sql } from "drizzle-orm";
import { type AnyPgColumn, bigserial, check, index, integer, numeric, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { statusEvents, ts, units } from "../../db/columns.js";
import { merchants } from "../merchants/schema.js";
import { payments } from "../payments/schema.js";

// The agents module's tables: only this module writes them (other modules read them through its index.ts).

/** Agents (docs/agents.md): a merchant account that refers others, with its markup, cap and platform-fee share. */
export const agents = pgTable(
  "agents",
  {
    merchantId: uuid("merchant_id")
      .primaryKey()
      .references((): AnyPgColumn => merchants.id),
    referralCode: text("referral_code").notNull().unique(),
    markupBps: integer("markup_bps").notNull().default(0),
    markupCapBps: integer("markup_cap_bps").notNull(),
    platformShareBps: integer("platform_share_bps").notNull(),
    payoutAddress: text("payout_address"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  () => [
    check("agents_markup_within_cap", sql`markup_bps >= 0 AND markup_bps <= markup_cap_bps`),
    check("agents_markup_cap_range", sql`markup_cap_bps >= 0 AND markup_cap_bps <= 10000`),
    check("agents_platform_share_range", sql`platform_share_bps >= 0 AND platform_share_bps <= 10000`),
  ],
);

/** An agent's earnings and withdrawals, one signed row per movement (migration 0018). */
export const agentEarnings = pgTable(
  "agent_earnings",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    agentId: uuid("agent_id")
      .notNull()
      .references(() => agents.merchantId),
    kind: text("kind").notNull(),
    paymentId: uuid("payment_id").references(() => payments.id),
    withdrawalId: uuid("withdrawal_id"),
    chainId: integer("chain_id").notNull(),
    /** Token address (lowercase, zero for native) on chainId, or `usd` (chain 0) for Gas Tank payments' fees. */
    currency: text("currency").notNull(),
    decimals: integer("decimals").notNull(),
    symbol: text("symbol").notNull(),
    units: units("units").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    check("agent_earnings_kind", sql`kind IN ('markup', 'platform_share', 'withdrawal', 'withdrawal_refund')`),
    check("agent_earnings_sign", sql`(kind = 'withdrawal' AND units < 0) OR (kind <> 'withdrawal' AND units > 0)`),
    uniqueIndex("agent_earnings_payment_kind_idx")
      .on(t.paymentId, t.kind)
      .where(sql`payment_id IS NOT NULL`),
    uniqueIndex("agent_earnings_withdrawal_kind_idx")
      .on(t.withdrawalId, t.kind)
      .where(sql`withdrawal_id IS NOT NULL`),
    index("agent_earnings_agent_idx").on(t.agentId, t.chainId, t.currency),
  ],
);

/** Withdrawals of agents' earnings, sent by the transaction sender (processors/agent-payouts.ts). */
export const agentWithdrawals = pgTable(
  "agent_withdrawals",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    agentId: uuid("agent_id")
      .notNull()
      .references(() => agents.merchantId),
    chainId: integer("chain_id").notNull(),
    currency: text("currency").notNull(),
    tokenAddress: text("token_address").notNull(),
    decimals: integer("decimals").notNull(),
    symbol: text("symbol").notNull(),
    units: units("units").notNull(),
    toAddress: text("to_address").notNull(),
    status: text("status").notNull().default("requested"),
    signer: text("signer"),
    nonce: integer("nonce"),
    txHash: text("tx_hash"),
    rawTx: text("raw_tx"),
    error: text("error"),
    blockNumber: numeric("block_number", { precision: 78, scale: 0 }),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    check("agent_withdrawals_status", sql`status IN ('requested', 'signed', 'sent', 'mined', 'reverted', 'paid', 'failed')`),
    check("agent_withdrawals_units", sql`units > 0`),
    index("agent_withdrawals_live_idx")
      .on(t.chainId, t.createdAt)
      .where(sql`status IN ('requested', 'signed', 'sent', 'mined', 'reverted')`),
    index("agent_withdrawals_agent_idx").on(t.agentId, t.createdAt),
  ],
);

/** Every status change of an agent withdrawal, for audit (modules/agents/transition.ts). */
export const agentWithdrawalEvents = statusEvents("agent_withdrawal_events", {
  column: "withdrawal_id",
  references: () => agentWithdrawals.id,
});
