import { sql } from "drizzle-orm";
import {
  type AnyPgColumn,
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  numeric,
  primaryKey,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

// The service's own tables. They carry no schema name: connections set search_path to
// APP_SCHEMA (default `app`), so each test file can work in a schema of its own.
// Money columns are numeric(78,0) in smallest units (read as strings, handled as bigint).

const units = (name: string) => numeric(name, { precision: 78, scale: 0 });
const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/**
 * The audit table of a status table: one row per status change, written by its transition() (db/status-machine.ts)
 * in the transaction of the change. `subject` is the column naming the row that changed.
 */
function statusEvents(name: string, subject: { column: string; kind?: "uuid" | "text"; references: () => AnyPgColumn }) {
  const subjectColumn = (subject.kind === "text" ? text(subject.column) : uuid(subject.column)).notNull().references(subject.references);
  return pgTable(
    name,
    {
      id: bigserial("id", { mode: "bigint" }).primaryKey(),
      subject: subjectColumn,
      fromStatus: text("from_status"),
      toStatus: text("to_status").notNull(),
      reason: text("reason"),
      data: jsonb("data"),
      createdAt: ts("created_at").notNull().defaultNow(),
    },
    (t) => [index(`${name}_${subject.column.replace(/_id$/, "")}_idx`).on(t.subject)],
  );
}

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
    platformFeeBps: integer("platform_fee_bps").notNull(),
    promoApplied: boolean("promo_applied").notNull().default(false),
    platformFeeUnits: units("platform_fee_units").notNull().default("0"),
    gasFeeUnits: units("gas_fee_units").notNull().default("0"),
    processingFeeUnits: units("processing_fee_units").notNull().default("0"),
    /** Fees charged to the Gas Tank, in USDT micro-units (6 decimals), in Gas Tank mode. */
    gasTankFeeMicros: units("gas_tank_fee_micros").notNull().default("0"),
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

/** Gas Tank ledger: USDT micro-units (6 decimals), signed. `reference` makes every entry idempotent. */
export const ledgerEntries = pgTable(
  "ledger_entries",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    kind: text("kind").notNull(), // gas_tank_deposit | gas_tank_reorg | settlement_fee | settlement_refund | recovery_fee | recovery_refund | vault_sweep_fee | vault_sweep_refund | adjustment
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

export const webhookConfigs = pgTable("webhook_configs", {
  id: uuid("id").primaryKey().defaultRandom(),
  merchantId: uuid("merchant_id")
    .notNull()
    .unique()
    .references(() => merchants.id),
  url: text("url").notNull(),
  events: text("events").array().notNull(),
  isActive: boolean("is_active").notNull().default(true),
  /** `whsec_…`; null for legacy webhooks, which sign with the API key. */
  secret: text("secret"),
  /**
   * Legacy webhooks (no dedicated secret) sign with the merchant's API key, but `api_keys` stores only its
   * SHA-256: the key is captured here when the merchant creates a legacy webhook (`PUT /v1/webhooks` with
   * `{legacy: true}`, signed with the key of that request) and cleared when a secret is generated.
   */
  legacyApiKey: text("legacy_api_key"),
  createdAt: ts("created_at").notNull().defaultNow(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/** Outbox: one row per event to deliver, written in the transaction of the state change that causes it. */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    /** `payment` (X-Signature) or `vault` (X-Webhook-Signature). */
    kind: text("kind").notNull().default("payment"),
    event: text("event").notNull(),
    paymentId: uuid("payment_id"),
    depositId: text("deposit_id"),
    /** Vault deliveries: the vault whose webhook receives them (read at send time). */
    vaultId: uuid("vault_id"),
    /** Idempotency: one delivery per (event, subject, cause). */
    dedupeKey: text("dedupe_key").notNull().unique(),
    payload: jsonb("payload").notNull(),
    /** The exact JSON text sent (and signed) on every attempt; null only on rows older than this column (then `payload` is serialized). */
    body: text("body"),
    status: text("status").notNull().default("pending"), // pending | success | failed
    /** HTTP attempts made so far (every round, manual resends included). */
    attempts: integer("attempts").notNull().default(0),
    /** The delivery is `failed` once `attempts` reaches this: 3 (1 for `payment.awaiting_gas`); a manual resend allows one more. */
    maxAttempts: integer("max_attempts").notNull().default(3),
    nextAttemptAt: ts("next_attempt_at").notNull().defaultNow(),
    /** Lease of the dispatcher replica that claimed the row (FOR UPDATE SKIP LOCKED); expired leases are reclaimed. */
    lockedUntil: ts("locked_until"),
    /** Token of the claim holding the lease: only its holder records the result. */
    claimToken: uuid("claim_token"),
    lastHttpStatus: integer("last_http_status"),
    lastResponse: text("last_response"),
    lastError: text("last_error"),
    lastAttemptAt: ts("last_attempt_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
    deliveredAt: ts("delivered_at"),
  },
  (t) => [
    index("webhook_deliveries_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`status = 'pending'`),
    index("webhook_deliveries_merchant_idx").on(t.merchantId, t.createdAt.desc()),
    index("webhook_deliveries_payment_idx").on(t.paymentId),
  ],
);

/**
 * Vault webhook target of a vault (one per vault; a merchant has one vault per API key). Deliveries go
 * through the same outbox (`webhook_deliveries.kind = 'vault'`, `vault_id`). `events` holds
 * `deposit.completed`, `deposit.failed` and/or `deposit.*`; `secret` (`whsec_…`) is optional: without it
 * no signature header is sent. The Vault API (`/vault/v1/config/webhooks`) manages these rows through
 * modules/webhooks/vault-config.ts.
 */
export const vaultWebhookConfigs = pgTable("vault_webhook_configs", {
  id: uuid("id").primaryKey().defaultRandom(),
  merchantId: uuid("merchant_id")
    .notNull()
    .references(() => merchants.id),
  vaultId: uuid("vault_id")
    .notNull()
    .unique()
    .references(() => vaultConfigs.id),
  url: text("url").notNull(),
  events: text("events").array().notNull(),
  secret: text("secret"),
  isActive: boolean("is_active").notNull().default(true),
  createdAt: ts("created_at").notNull().defaultNow(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/** One row per HTTP attempt: the delivery log. */
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    deliveryId: uuid("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id),
    attempt: integer("attempt").notNull(),
    url: text("url").notNull(),
    httpStatus: integer("http_status"),
    response: text("response"),
    error: text("error"),
    durationMs: integer("duration_ms"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId)],
);

/**
 * The event feed (GET /v1/events, modules/events; migration 0023): every payment and Vault event, written in the
 * transaction of its state change whatever the webhook configuration, with the webhook's id and exact body. `seq` is
 * the write order; `position`, counted per merchant and given to committed rows by the holder of the merchant's
 * sequencing lock (modules/events/sequence.ts), the feed's order.
 */
export const eventFeed = pgTable(
  "event_feed",
  {
    seq: bigserial("seq", { mode: "bigint" }).primaryKey(),
    /** The `webhook-id` of the event's deliveries (their `webhook_deliveries.id`). */
    id: uuid("id").notNull().unique().defaultRandom(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    kind: text("kind").notNull(), // payment | vault
    type: text("type").notNull(),
    paymentId: uuid("payment_id"),
    depositId: text("deposit_id"),
    /** Vault events: seen only with the API key of this vault. */
    vaultId: uuid("vault_id"),
    /** The outbox's idempotency key: one event per key. */
    dedupeKey: text("dedupe_key").notNull().unique(),
    /** The webhook body, exactly as its deliveries send and sign it. */
    body: text("body").notNull(),
    /** Feed order within the merchant's feed; null until the event is sequenced (modules/events/sequence.ts). */
    position: bigint("position", { mode: "bigint" }),
    /** The event's time (the caller's clock): `createdAt`. */
    createdAt: ts("created_at").notNull().defaultNow(),
    /** When the row was written (database clock): retention counts from it. */
    insertedAt: ts("inserted_at").notNull().defaultNow(),
  },
  (t) => [
    check("event_feed_kind", sql`kind IN ('payment', 'vault')`),
    check("event_feed_position_positive", sql`position > 0`),
    uniqueIndex("event_feed_merchant_position_idx").on(t.merchantId, t.position),
    index("event_feed_unsequenced_idx")
      .on(t.merchantId, t.seq)
      .where(sql`position IS NULL`),
    index("event_feed_inserted_idx")
      .on(t.insertedAt)
      .where(sql`position IS NOT NULL`),
  ],
);

/** The last position given in each merchant's feed; kept when events are purged (positions are never reused). */
export const eventFeedHeads = pgTable(
  "event_feed_heads",
  {
    merchantId: uuid("merchant_id")
      .primaryKey()
      .references(() => merchants.id),
    position: bigint("position", { mode: "bigint" })
      .notNull()
      .default(sql`0`),
  },
  () => [check("event_feed_heads_position_nonnegative", sql`position >= 0`)],
);

/** Key/value state of processors (last scanned block per chain, etc.). */
export const processorState = pgTable("processor_state", {
  key: text("key").primaryKey(),
  value: jsonb("value").notNull(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

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

/**
 * Token buckets of the rate limits, shared by every API replica (api/middleware/rate-limit-store.ts): GCRA keeps
 * one time per bucket, when it will be full again ("theoretical arrival time"). A time in the past is a full
 * bucket, the same as no row: such rows are pruned.
 * UNLOGGED (migration 0013), which drizzle cannot declare: test/db/migrations.test.ts lists it as known.
 */
export const rateLimitBuckets = pgTable(
  "rate_limit_buckets",
  {
    /** `m:<merchant id>:<scope>` or `ip:<address or IPv6 /64>:<scope>`. */
    key: text("key").primaryKey(),
    tat: ts("tat").notNull(),
  },
  (t) => [index("rate_limit_buckets_tat_idx").on(t.tat)],
);

/** Failed dashboard logins per account (hashed e-mail) and per client address (modules/merchants/login-throttle.ts). */
export const loginAttempts = pgTable("login_attempts", {
  /** `account:<sha256 of the lowercased e-mail>` or `address:<address or IPv6 /64>`. */
  key: text("key").primaryKey(),
  failures: integer("failures").notNull(),
  lastFailureAt: ts("last_failure_at").notNull(),
  /** No attempt is checked before this time. */
  lockedUntil: ts("locked_until"),
});

/**
 * Every address we hand out, per chain (payment recipients, Gas Tank deposit addresses; later vault users and
 * bridge orders), registered in the transaction that creates it (modules/addresses/registry.ts). The indexer keeps a
 * Transfer only when `to` or `from` is here: a trigger NOTIFYs `watched_addresses` with `chainId:address` at commit.
 * The trigger and its function are in migration 0006 only (drizzle cannot declare them; test/db/migrations.test.ts).
 */
export const watchedAddresses = pgTable(
  "watched_addresses",
  {
    chainId: integer("chain_id").notNull(),
    /** Lowercase hex, as the indexer compares it. */
    address: text("address").notNull(),
    /** `payment` | `gas_tank` (later `vault`, `bridge`). */
    kind: text("kind").notNull(),
    /** What the address belongs to: the payment id, the merchant id for a Gas Tank address. */
    ownerId: text("owner_id").notNull(),
    merchantId: uuid("merchant_id").references(() => merchants.id),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.address] }), check("watched_addresses_address_lowercase", sql`address = lower(address)`)],
);

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

// ---- Vault configuration (modules/vault/config.ts): one vault per API key, owned by the key's merchant.

/**
 * A business's vault. Created through one API key (`api_key_id`, unique: one vault per key) and reached only
 * through it; the vault belongs to the key's merchant. Revoking the key leaves the vault working (addresses,
 * deposits, sweeps, webhooks) but unreachable by API until the operator binds it to another key of the same
 * merchant (`npm run cli -- vault rebind`). `fee_bps`/`fee_recipient` are set only by the operator
 * (`vault fee`, which records `fee_registered_at`: a registered business); null recipient = FEE_RECIPIENT.
 */
export const vaultConfigs = pgTable(
  "vault_configs",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** Random, URL-safe, shown publicly (GET /vault/v1/business/{publicId}/tokens); not the row id. */
    publicId: text("public_id").notNull().unique(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    apiKeyId: uuid("api_key_id")
      .notNull()
      .unique()
      .references(() => apiKeys.id),
    businessName: text("business_name").notNull(),
    /** Checksummed EVM address: where sweeps pay (minus the fee). */
    walletAddress: text("wallet_address").notNull(),
    feeBps: integer("fee_bps").notNull().default(25),
    /** Checksummed; null = the deployment's FEE_RECIPIENT. */
    feeRecipient: text("fee_recipient"),
    /** When the operator registered the business's custom fee (null: default fee). */
    feeRegisteredAt: ts("fee_registered_at"),
    isActive: boolean("is_active").notNull().default(true),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [index("vault_configs_merchant_idx").on(t.merchantId), check("vault_configs_fee_bps_range", sql`fee_bps BETWEEN 0 AND 100`)],
);

/**
 * Which merchant a business wallet belongs to in the Vault: a wallet is used by the vaults of one merchant only
 * (the first to configure it), so no other merchant can squat its users' deposit addresses (they derive from the
 * user id and the wallet). Lowercase; kept after a wallet change (old addresses still pay that wallet).
 */
export const vaultWallets = pgTable(
  "vault_wallets",
  {
    walletAddress: text("wallet_address").primaryKey(),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  () => [check("vault_wallets_address_lowercase", sql`wallet_address = lower(wallet_address)`)],
);

/** Tokens a vault accepts (`enabledTokens`): per chain, lowercase address, with its decimals read from the contract. */
export const vaultTokens = pgTable(
  "vault_tokens",
  {
    vaultId: uuid("vault_id")
      .notNull()
      .references(() => vaultConfigs.id),
    chainId: integer("chain_id").notNull(),
    /** Lowercase hex, as the indexer stores transfers. */
    tokenAddress: text("token_address").notNull(),
    tokenSymbol: text("token_symbol").notNull(),
    decimals: integer("decimals").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.vaultId, t.chainId, t.tokenAddress] }),
    check("vault_tokens_address_lowercase", sql`token_address = lower(token_address)`),
  ],
);

// ---- Vault users, deposits and sweeps (modules/vault/users.ts, deposits.ts, sweep.ts).

/**
 * A vault user's deposit address on one chain. The address is the factory's CREATE2 wallet of
 * (vaultSalt(externalUserId, wallet), payout = wallet): the same on every chain and for every token, so a row is
 * per (vault, user, wallet, chain). A wallet change (PATCH /vault/v1/config) gives the user a new row and address;
 * the old one stays watched and keeps paying the old wallet. Registered in `watched_addresses` (kind `vault`,
 * owner = this id) in the transaction that inserts it.
 */
export const vaultUsers = pgTable(
  "vault_users",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    vaultId: uuid("vault_id")
      .notNull()
      .references(() => vaultConfigs.id),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    externalUserId: text("external_user_id").notNull(),
    chainId: integer("chain_id").notNull(),
    /** Lowercase: the payout the address commits to (the vault's wallet when the row was made). */
    businessWallet: text("business_wallet").notNull(),
    salt: text("salt").notNull(),
    /** Lowercase, as the indexer stores transfers. */
    address: text("address").notNull(),
    /** The token of the latest POST /vault/v1/users for this row (lowercase), shown by GET /vault/v1/users. */
    tokenAddress: text("token_address").notNull(),
    tokenSymbol: text("token_symbol").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
    /** Time of the latest POST /vault/v1/users that returned this row. */
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("vault_users_identity_idx").on(t.vaultId, t.externalUserId, t.businessWallet, t.chainId),
    uniqueIndex("vault_users_chain_address_idx").on(t.chainId, t.address),
    index("vault_users_lookup_idx").on(t.vaultId, t.externalUserId, t.updatedAt.desc()),
    check("vault_users_address_lowercase", sql`address = lower(address) AND business_wallet = lower(business_wallet)`),
  ],
);

/**
 * Vault sweep transactions (one row per transaction; it may sweep several (address, token) groups), written with
 * their signed bytes before broadcast (chains/tx-sender.ts). signed -> sent -> mined -> completed (every group's
 * Swept event indexed and matched), or reverted / dropped (its deposits are swept again).
 */
export const vaultSweeps = pgTable(
  "vault_sweeps",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    chainId: integer("chain_id").notNull(),
    signer: text("signer").notNull(),
    nonce: integer("nonce").notNull(),
    txHash: text("tx_hash").notNull().unique(),
    rawTx: text("raw_tx").notNull(),
    /** The deposits it was signed for (audit; a deposit's `sweep_id` names the sweep that covers it now). */
    depositIds: uuid("deposit_ids").array().notNull(),
    status: text("status").notNull().default("signed"), // signed | sent | mined | completed | reverted | dropped
    gasUsed: numeric("gas_used", { precision: 78, scale: 0 }),
    effectiveGasPrice: numeric("effective_gas_price", { precision: 78, scale: 0 }),
    blockNumber: numeric("block_number", { precision: 78, scale: 0 }),
    /** Why it failed, or what the indexed Swept events showed that the deposits did not (operator's note). */
    error: text("error"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("vault_sweeps_signer_nonce_idx").on(t.chainId, t.signer, t.nonce),
    index("vault_sweeps_chain_status_idx").on(t.chainId, t.status),
  ],
);

/**
 * One row per confirmed transfer to a vault user's address (idempotent on `transfer_id`, the indexer's id).
 * detected -> processing (a sweep is signed) -> completed (its Swept event indexed), or failed (retried with
 * backoff at `next_attempt_at`); detected | failed -> held (its sender failed sanctions screening: its (address, token)
 * is not swept until the operator releases it back to detected; sanctions_holds). `hold`: why a detected deposit is not swept on its own (`below_minimum`: at most
 * 0.001 tokens; `token_not_enabled`: a token the vault does not accept). A sweep moves the address's whole balance
 * of the token, so it also carries (completes) held deposits of that token; `recover_requested_at` asks for a
 * sweep of held ones (charged the vault's fee like any sweep). Amounts in smallest units.
 */
export const vaultDeposits = pgTable(
  "vault_deposits",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    vaultId: uuid("vault_id")
      .notNull()
      .references(() => vaultConfigs.id),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    vaultUserId: uuid("vault_user_id")
      .notNull()
      .references(() => vaultUsers.id),
    chainId: integer("chain_id").notNull(),
    /** Lowercase deposit address, and the payout it commits to. */
    address: text("address").notNull(),
    payout: text("payout").notNull(),
    tokenAddress: text("token_address").notNull(),
    tokenSymbol: text("token_symbol").notNull(),
    /** Null when the contract does not tell (not an ERC-20 we can read). */
    tokenDecimals: integer("token_decimals"),
    amount: units("amount").notNull(),
    /** The fee planned (detected, processing) or taken (completed): floor(amount * feeBps / 10000). */
    fee: units("fee").notNull().default("0"),
    netAmount: units("net_amount").notNull(),
    status: text("status").notNull().default("detected"),
    hold: text("hold"),
    recoverRequestedAt: ts("recover_requested_at"),
    transferId: text("transfer_id").notNull().unique(),
    /** Null for a deposit recorded from the address's balance (no transfer indexed: modules/vault/sweep.ts recordExcess). */
    depositTxHash: text("deposit_tx_hash"),
    blockNumber: numeric("block_number", { precision: 78, scale: 0 }).notNull(),
    logIndex: integer("log_index").notNull(),
    sweepId: uuid("sweep_id").references(() => vaultSweeps.id),
    processTxHash: text("process_tx_hash"),
    processedAt: ts("processed_at"),
    /** Failed sweep attempts in a row; the next one is due at `next_attempt_at` (backoff). */
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at"),
    lastError: text("last_error"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    index("vault_deposits_vault_created_idx").on(t.vaultId, t.createdAt.desc(), t.id.desc()),
    index("vault_deposits_user_idx").on(t.vaultUserId),
    index("vault_deposits_open_idx")
      .on(t.chainId, t.address, t.tokenAddress)
      .where(sql`status <> 'completed'`),
    // The deposits that ask for a sweep (modules/vault/sweep.ts readyGroups): held ones that never will stay out.
    index("vault_deposits_trigger_idx")
      .on(t.chainId, t.createdAt)
      .where(sql`status IN ('detected', 'failed') AND (hold IS NULL OR recover_requested_at IS NOT NULL)`),
    index("vault_deposits_sweep_idx").on(t.sweepId),
  ],
);

/** Every status change of a Vault sweep, for audit (modules/vault/transition.ts). */
export const vaultSweepEvents = statusEvents("vault_sweep_events", { column: "sweep_id", references: () => vaultSweeps.id });

/** Every status change of a vault deposit, for audit (modules/vault/deposits.ts `transitionDeposits`). */
export const vaultDepositEvents = statusEvents("vault_deposit_events", { column: "deposit_id", references: () => vaultDeposits.id });

/**
 * Cross-chain orders of payments (modules/bridge/orders.ts), one row per bridge order (the provider's orderId, lowercase hex).
 * quoted (create-tx answered for the payer page) -> created (the payer's transaction reported or seen: the 5-minute
 * fill window starts at `reported_at`) -> fulfilled (the recipient was paid on the destination) -> claimed_unlock;
 * or created -> cancel_sent (our authority's cancel transaction, stored before broadcast like every transaction)
 * -> cancelled (the escrow refunded to the payer on the source). `failed`: a cancel that reverted while the order
 * stayed unfilled (operator attention). Amounts in smallest units: `src_amount` of `src_token`, `take_amount` of
 * the payment's token (exact).
 */
export const bridgeOrders = pgTable(
  "bridge_orders",
  {
    id: text("id").primaryKey(),
    paymentId: uuid("payment_id")
      .notNull()
      .references(() => payments.id),
    srcChainId: integer("src_chain_id").notNull(),
    srcToken: text("src_token").notNull(),
    srcAmount: units("src_amount").notNull(),
    payer: text("payer").notNull(),
    dstChainId: integer("dst_chain_id").notNull(),
    dstToken: text("dst_token").notNull(),
    takeAmount: units("take_amount").notNull(),
    status: text("status").notNull().default("quoted"),
    /** The provider's last answer (DLN: Created, Fulfilled, SentUnlock, ClaimedUnlock, SentOrderCancel, ClaimedOrderCancel...). */
    providerStatus: text("provider_status"),
    createTxHash: text("create_tx_hash"),
    /** When the order was known created on the source: the auto-cancel counts 5 minutes from here. */
    reportedAt: ts("reported_at"),
    /** Last time the provider was asked about this order: its status, or an unreported quote (modules/bridge/poll.ts). */
    checkedAt: ts("checked_at"),
    cancelTxHash: text("cancel_tx_hash"),
    cancelRawTx: text("cancel_raw_tx"),
    cancelNonce: integer("cancel_nonce"),
    /** signed | sent | mined | reverted | dropped (chains/tx-sender.ts outcomes). */
    cancelTxStatus: text("cancel_tx_status"),
    error: text("error"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    index("bridge_orders_payment_idx").on(t.paymentId, t.createdAt.desc()),
    // What the bridge-orders processor polls, and what holds a payment's expiry.
    index("bridge_orders_live_idx")
      .on(t.status, t.reportedAt)
      .where(sql`status IN ('created', 'fulfilled', 'cancel_sent')`),
  ],
);

/** Every status change of a bridge order, for audit (modules/bridge/transition.ts). */
export const bridgeOrderEvents = statusEvents("bridge_order_events", {
  column: "order_id",
  kind: "text",
  references: () => bridgeOrders.id,
});

/**
 * Sanctions screening (modules/sanctions, docs/sanctions.md): one row per payment, recovery of unexpected funds or
 * vault deposit held because a sanctions source flagged its sender: the positive result kept for audit (`address`,
 * `source`: `oracle:0x…` or `list:<file>`), and the status the subject was taken from (a payment: `paid`,
 * `deploying_wallet` or `withdraw_request`; a recovery: `requested`). held -> released (the operator lets it settle;
 * that address is not screened again for that payment) or rejected (it never settles here; no funds move), or
 * dropped (a held vault deposit's transfer was rolled back by a re-org); held or rejected -> returned (the operator sent
 * the funds to an address of their choice: sanctions_returns). A released row with the zero address and
 * source `unidentified` is the operator's acceptance of senders that could not be identified (native coin).
 */
export const sanctionsHolds = pgTable(
  "sanctions_holds",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** `payment`, `recovery` or `vault_deposit`. */
    subject: text("subject").notNull(),
    /** The payment; also set for a recovery (the recovery's payment). */
    paymentId: uuid("payment_id").references(() => payments.id),
    recoveryId: uuid("recovery_id").references(() => fundRecoveries.id),
    depositId: uuid("deposit_id").references(() => vaultDeposits.id),
    chainId: integer("chain_id").notNull(),
    /** The flagged sender, lowercase. */
    address: text("address").notNull(),
    source: text("source").notNull(),
    fromStatus: text("from_status").notNull(),
    status: text("status").notNull().default("held"), // held | released | rejected | dropped | returned
    createdAt: ts("created_at").notNull().defaultNow(),
    resolvedAt: ts("resolved_at"),
  },
  (t) => [
    check(
      "sanctions_holds_subject",
      sql`(subject = 'payment' AND payment_id IS NOT NULL AND recovery_id IS NULL AND deposit_id IS NULL) OR (subject = 'recovery' AND recovery_id IS NOT NULL AND payment_id IS NOT NULL AND deposit_id IS NULL) OR (subject = 'vault_deposit' AND deposit_id IS NOT NULL AND payment_id IS NULL AND recovery_id IS NULL)`,
    ),
    check("sanctions_holds_status", sql`status IN ('held', 'released', 'rejected', 'dropped', 'returned')`),
    check("sanctions_holds_address_lowercase", sql`address = lower(address)`),
    uniqueIndex("sanctions_holds_open_payment_idx")
      .on(t.paymentId)
      .where(sql`status = 'held' AND subject = 'payment'`),
    uniqueIndex("sanctions_holds_open_recovery_idx")
      .on(t.recoveryId)
      .where(sql`status = 'held' AND recovery_id IS NOT NULL`),
    uniqueIndex("sanctions_holds_open_deposit_idx")
      .on(t.depositId)
      .where(sql`status = 'held' AND deposit_id IS NOT NULL`),
    index("sanctions_holds_payment_idx")
      .on(t.paymentId)
      .where(sql`payment_id IS NOT NULL`),
    index("sanctions_holds_deposit_idx")
      .on(t.depositId)
      .where(sql`deposit_id IS NOT NULL`),
    index("sanctions_holds_held_idx")
      .on(t.createdAt)
      .where(sql`status = 'held'`),
  ],
);

/**
 * Every decision on a hold (`release`, `reject` by the operator; `drop` by `system` when a held deposit is re-orged
 * away): who, why, when, written with the subject's transition.
 */
export const sanctionsActions = pgTable(
  "sanctions_actions",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    holdId: uuid("hold_id")
      .notNull()
      .references(() => sanctionsHolds.id),
    action: text("action").notNull(),
    actor: text("actor").notNull(),
    reason: text("reason").notNull(),
    /** The payment's, recovery's or deposit's status before and after. */
    subjectFrom: text("subject_from").notNull(),
    subjectTo: text("subject_to").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    check("sanctions_actions_action", sql`action IN ('release', 'reject', 'drop', 'return')`),
    check("sanctions_actions_reason", sql`length(btrim(reason)) > 0`),
    check("sanctions_actions_actor", sql`length(btrim(actor)) > 0`),
    index("sanctions_actions_hold_idx").on(t.holdId),
  ],
);

/**
 * A return of held funds (`sanctions return`, modules/sanctions/return.ts): the factory owner's `returnFunds`
 * transaction sending `amount_units` of `token` (zero address: native coin) from the held subject's deposit address to
 * `to_address`, stored with its signed bytes before broadcast. signed -> sent -> mined -> completed (final and indexed:
 * the hold becomes `returned`), or reverted / dropped (nothing moved). At most one open (signed, sent, mined) per hold.
 * `licence`: the operator's reference when `to_address` is itself flagged. Addresses lowercase.
 */
export const sanctionsReturns = pgTable(
  "sanctions_returns",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    holdId: uuid("hold_id")
      .notNull()
      .references(() => sanctionsHolds.id),
    chainId: integer("chain_id").notNull(),
    wallet: text("wallet").notNull(),
    token: text("token").notNull(),
    toAddress: text("to_address").notNull(),
    amountUnits: units("amount_units").notNull(),
    licence: text("licence"),
    actor: text("actor").notNull(),
    reason: text("reason").notNull(),
    status: text("status").notNull().default("signed"), // signed | sent | mined | completed | reverted | dropped
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
    check("sanctions_returns_status", sql`status IN ('signed', 'sent', 'mined', 'completed', 'reverted', 'dropped')`),
    check("sanctions_returns_amount_positive", sql`amount_units > 0`),
    check(
      "sanctions_returns_lowercase",
      sql`wallet = lower(wallet) AND token = lower(token) AND to_address = lower(to_address) AND signer = lower(signer)`,
    ),
    check("sanctions_returns_reason", sql`length(btrim(reason)) > 0`),
    check("sanctions_returns_actor", sql`length(btrim(actor)) > 0`),
    uniqueIndex("sanctions_returns_open_idx")
      .on(t.holdId)
      .where(sql`status IN ('signed', 'sent', 'mined')`),
    index("sanctions_returns_chain_open_idx")
      .on(t.chainId, t.nonce)
      .where(sql`status IN ('signed', 'sent', 'mined')`),
    index("sanctions_returns_hold_idx").on(t.holdId),
  ],
);

/**
 * A payment or recovery whose screening could not finish (`unavailable`: a source did not answer; `unidentified`:
 * a native-coin sender could not be identified) and waits under SANCTIONS_FAIL_MODE=closed: the settler leaves it
 * out until `retry_at` (a backoff, so stuck rows neither cost a search every pass nor starve newer ones). Deleted
 * once it is screened (clear or held) or released by the operator; shown by `sanctions list`.
 */
export const sanctionsScreenings = pgTable(
  "sanctions_screenings",
  {
    /** `payment` or `recovery`. */
    subject: text("subject").notNull(),
    subjectId: uuid("subject_id").notNull(),
    paymentId: uuid("payment_id")
      .notNull()
      .references(() => payments.id),
    chainId: integer("chain_id").notNull(),
    kind: text("kind").notNull(), // unavailable | unidentified
    reason: text("reason").notNull(),
    attempts: integer("attempts").notNull().default(1),
    firstAt: ts("first_at").notNull(),
    lastAt: ts("last_at").notNull(),
    retryAt: ts("retry_at").notNull(),
  },
  (t) => [
    primaryKey({ name: "sanctions_screenings_pk", columns: [t.subject, t.subjectId] }),
    check("sanctions_screenings_subject", sql`subject IN ('payment', 'recovery')`),
    check("sanctions_screenings_kind", sql`kind IN ('unavailable', 'unidentified')`),
    index("sanctions_screenings_payment_idx").on(t.paymentId),
  ],
);

/**
 * Idempotency keys (docs/payments.md "Idempotency keys", modules/idempotency; migration 0021): the first final response to a POST
 * with an `Idempotency-Key` header (or a GraphQL mutation's `idempotencyKey`), per API key and key, for 24 hours.
 * `processing` while the request runs (`claim_id` names it, `locked_at` its last sign of life on the database's clock;
 * -infinity once it gave up with a 5xx), `done` with the response after. `id` is one use of the key.
 */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    /** This use of the key: kept while the key lives, a new one once it expired and is used again. */
    id: uuid("id").notNull().unique("idempotency_keys_id_unique"),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    apiKeyId: uuid("api_key_id")
      .notNull()
      .references(() => apiKeys.id),
    key: text("key").notNull(),
    /** `POST` and the path under /api, or `GRAPHQL` and the mutation's field name. */
    method: text("method").notNull(),
    path: text("path").notNull(),
    /** SHA-256 (hex) of the canonical request body or arguments. */
    requestHash: text("request_hash").notNull(),
    state: text("state").notNull().default("processing"), // processing | done
    claimId: uuid("claim_id").notNull(),
    responseStatus: integer("response_status"),
    /** The response as sent, sealed with SECRET_KEY (modules/webhooks/sealed.ts): a replay is byte for byte the same. */
    responseBody: text("response_body"),
    /** The response's own headers, `[name, value]` pairs (content type, rate limit, ...). */
    responseHeaders: jsonb("response_headers").$type<[string, string][]>(),
    lockedAt: ts("locked_at").notNull(),
    createdAt: ts("created_at").notNull(),
    completedAt: ts("completed_at"),
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [
    primaryKey({ name: "idempotency_keys_pk", columns: [t.merchantId, t.apiKeyId, t.key] }),
    check("idempotency_keys_state", sql`state IN ('processing', 'done')`),
    check(
      "idempotency_keys_done_response",
      sql`state = 'processing' OR (response_status IS NOT NULL AND response_body IS NOT NULL AND response_headers IS NOT NULL)`,
    ),
    check("idempotency_keys_key_length", sql`length(key) BETWEEN 1 AND 255`),
    index("idempotency_keys_expires_idx").on(t.expiresAt),
  ],
);
