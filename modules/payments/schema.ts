import { sql } from "drizzle-orm";
import { boolean, check, index, integer, numeric, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { statusEvents, ts, units } from "../../db/columns.js";
import { merchants } from "../merchants/schema.js";
import { terminals } from "../terminals/schema.js";

// The payments module's tables: only this module writes them (other modules read them through its index.ts).

export const payments = pgTable(
  "payments",
  {
    id: uuid("id").primaryKey(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    orderId: text("order_id").notNull(),
    description: text("description"),
    status: text("status").notNull().default("pending"),
    chainId: integer("chain_id").notNull(),
    tokenAddress: text("token_address").notNull(),
    tokenSymbol: text("token_symbol").notNull(),
    tokenDecimals: integer("token_decimals").notNull(),
    /** Requested amount, smallest units. */
    amountUnits: units("amount_units").notNull(),
    /** What the payer must send: the amount, plus the fees in payer-covers-fee mode. */
    dueUnits: units("due_units").notNull(),
    merchantAddress: text("merchant_address").notNull(),
    recipientAddress: text("recipient_address").notNull(),
    salt: text("salt").notNull(),
    redirectUrl: text("redirect_url"),
    blockConfirmations: integer("block_confirmations").notNull().default(1),
    gasless: boolean("gasless").notNull().default(false),
    payerCoversFee: boolean("payer_covers_fee").notNull().default(false),
    customPriceUsd: text("custom_price_usd"),
    priceUsd: text("price_usd"),
    priceSource: text("price_source").notNull(),
    /** When the price was set (a Chainlink feed's or our PriceOracle's updatedAt, the index read); null: stablecoin or custom. */
    priceUpdatedAt: ts("price_updated_at"),
    platformFeeBps: integer("platform_fee_bps").notNull(),
    promoApplied: boolean("promo_applied").notNull().default(false),
    platformFeeUnits: units("platform_fee_units").notNull().default("0"),
    gasFeeUnits: units("gas_fee_units").notNull().default("0"),
    processingFeeUnits: units("processing_fee_units").notNull().default("0"),
    /** Fees charged to the Gas Tank, in USDT micro-units (6 decimals), in Gas Tank mode. */
    gasTankFeeMicros: units("gas_tank_fee_micros").notNull().default("0"),
    /**
     * The gas part of the quote, in USD with 18 decimals (null: created before it was kept). A Gas Tank payment's gas
     * is charged again at what the mined sweep cost when it completes (modules/settlement/gas-true-up.ts).
     */
    gasFeeUsd18: units("gas_fee_usd18"),
    /** The referring agent's terms at creation: markup (0 under the promotion) and share of the platform fee. */
    agentId: uuid("agent_id"),
    agentFeeBps: integer("agent_fee_bps").notNull().default(0),
    agentFeeUnits: units("agent_fee_units").notNull().default("0"),
    agentShareBps: integer("agent_share_bps").notNull().default(0),
    receivedUnits: units("received_units").notNull().default("0"),
    overpaymentUnits: units("overpayment_units").notNull().default("0"),
    /** The shortfall this payment may arrive with and count as paid, fixed at creation (modules/payments/tolerance.ts). */
    underpaymentToleranceUnits: units("underpayment_tolerance_units").notNull().default("0"),
    /** Due minus received of a payment accepted short under its tolerance; 0 otherwise. */
    underpaymentUnits: units("underpayment_units").notNull().default("0"),
    paymentTxHash: text("payment_tx_hash"),
    paymentBlockNumber: numeric("payment_block_number", { precision: 78, scale: 0 }),
    /** Newest block among the counted deposits: until it is final, a re-org may take them away (detect.ts). */
    receivedBlockNumber: numeric("received_block_number", { precision: 78, scale: 0 }),
    settlementTxHash: text("settlement_tx_hash"),
    settledUnits: units("settled_units"),
    withdrawnUnits: units("withdrawn_units"),
    withdrawalTxHash: text("withdrawal_tx_hash"),
    failureReason: text("failure_reason"),
    /** Newest Gas Tank ledger entry seen when this payment was last found short of gas (awaiting_gas rechecks only after a newer one). */
    gasCheckedLedgerId: numeric("gas_checked_ledger_id", { precision: 20, scale: 0 }),
    terminalId: uuid("terminal_id").references(() => terminals.id),
    expiresAt: ts("expires_at").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
    paidAt: ts("paid_at"),
    completedAt: ts("completed_at"),
    updatedAt: ts("updated_at").notNull().defaultNow(),
    /** Created under an Idempotency-Key (migration 0021): the API key, the key, and the key's use (idempotency_keys.id). */
    idempotencyApiKeyId: uuid("idempotency_api_key_id"),
    idempotencyKey: text("idempotency_key"),
    idempotencyKeyId: uuid("idempotency_key_id"),
  },
  (t) => [
    index("payments_merchant_created_idx").on(t.merchantId, t.createdAt.desc(), t.id.desc()),
    // One payment per use of an Idempotency-Key: a retry that runs again finds the first attempt's (create.ts).
    uniqueIndex("payments_idempotency_key_idx")
      .on(t.merchantId, t.idempotencyApiKeyId, t.idempotencyKey, t.idempotencyKeyId)
      .where(sql`idempotency_key IS NOT NULL`),
    check(
      "payments_idempotency_key_whole",
      sql`(idempotency_key IS NULL) = (idempotency_api_key_id IS NULL) AND (idempotency_key IS NULL) = (idempotency_key_id IS NULL)`,
    ),
    index("payments_status_idx").on(t.status),
    index("payments_order_idx").on(t.merchantId, t.orderId),
    uniqueIndex("payments_recipient_idx").on(t.chainId, t.recipientAddress),
    // The promotion's slot check of every creation (promo.ts): at most the merchant's 30 slots, not its whole history.
    index("payments_promo_slots_idx")
      .on(t.merchantId)
      .where(sql`promo_applied AND status NOT IN ('expired', 'failed', 'cancelled', 'withdrawn')`),
    // The re-org check's candidates (detect.ts detectLostDeposits): unswept payments with counted deposits.
    index("payments_reorg_window_idx")
      .on(t.chainId, t.receivedBlockNumber)
      .where(sql`received_units > 0 AND status IN ('pending', 'expired', 'paid', 'awaiting_gas')`),
    // An agent's completed payments (migration 0018).
    index("payments_agent_idx")
      .on(t.agentId, t.merchantId)
      .where(sql`agent_id IS NOT NULL AND status = 'completed'`),
  ],
);

/** Every state transition, for audit and for crash-safe replays. */
export const paymentEvents = statusEvents("payment_events", { column: "payment_id", references: () => payments.id });

/**
 * Recoveries of unexpected funds (another token, or funds that arrived after the payment was final) from a
 * payment's address to its committed payout: the factory's sweep with no fee (modules/settlement/recover.ts).
 * requested -> signed -> sent -> mined -> recovered (the Swept event indexed), or failed. At most one open
 * recovery per (payment, token). Tokens are lowercase; the zero address is the native coin.
 */
export const fundRecoveries = pgTable(
  "fund_recoveries",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    paymentId: uuid("payment_id")
      .notNull()
      .references(() => payments.id),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    chainId: integer("chain_id").notNull(),
    token: text("token").notNull(),
    status: text("status").notNull().default("requested"), // requested | signed | sent | mined | recovered | failed
    /** The balance seen when the merchant asked (indexed transfers, or the native balance). */
    requestedUnits: units("requested_units").notNull(),
    /** What the payout received, from the indexed Swept event. */
    recoveredUnits: units("recovered_units"),
    /** The fee the sweep paid the fee recipient out of the funds (a registry token with a price), set when signed. */
    feeUnits: units("fee_units"),
    /** The fee debited from the Gas Tank instead (any other token), USDT micros, set when signed. */
    gasTankFeeMicros: units("gas_tank_fee_micros"),
    signer: text("signer"),
    nonce: integer("nonce"),
    txHash: text("tx_hash").unique(),
    rawTx: text("raw_tx"),
    blockNumber: numeric("block_number", { precision: 78, scale: 0 }),
    error: text("error"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("fund_recoveries_open_idx")
      .on(t.paymentId, t.token)
      .where(sql`status in ('requested', 'signed', 'sent', 'mined')`),
    index("fund_recoveries_payment_idx").on(t.paymentId, t.createdAt.desc()),
    index("fund_recoveries_chain_status_idx").on(t.chainId, t.status),
  ],
);

/** Every status change of a recovery of unexpected funds, for audit (modules/payments/transition.ts). */
export const fundRecoveryEvents = statusEvents("fund_recovery_events", { column: "recovery_id", references: () => fundRecoveries.id });
