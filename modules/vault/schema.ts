import { sql } from "drizzle-orm";
import { boolean, check, index, integer, numeric, primaryKey, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { statusEvents, ts, units } from "../../db/columns.js";
import { apiKeys, merchants } from "../merchants/schema.js";

// The vault module's tables: only this module writes them (other modules read them through its index.ts).

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
