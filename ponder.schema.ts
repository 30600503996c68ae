import { index, onchainTable } from "ponder";

// Chain facts only. Everything the service decides lives in the `app` schema (app.schema.ts gathers its tables).
// Columns are snake_case in Postgres (chain_id, block_number, ...); addresses are lowercase hex.

/** Every ERC-20 Transfer of a supported token. Processors match `to` against deposit addresses. */
export const transfer = onchainTable(
  "transfer",
  (t) => ({
    id: t.text().primaryKey(), // `${chainId}:${txHash}:${logIndex}`
    chainId: t.integer().notNull(),
    token: t.hex().notNull(),
    from: t.hex().notNull(),
    to: t.hex().notNull(),
    amount: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
    blockHash: t.hex().notNull(),
    transactionHash: t.hex().notNull(),
    logIndex: t.integer().notNull(),
    timestamp: t.bigint().notNull(),
  }),
  (table) => ({
    toIdx: index().on(table.chainId, table.to),
    fromIdx: index().on(table.chainId, table.from),
    // The detector reads the transfers of the last blocks only (modules/payments/detect.ts).
    blockIdx: index().on(table.chainId, table.blockNumber),
  }),
);

/** Forwarder wallets deployed by the factory (WalletDeployed). */
export const walletDeployment = onchainTable(
  "wallet_deployment",
  (t) => ({
    id: t.text().primaryKey(), // `${chainId}:${wallet}`
    chainId: t.integer().notNull(),
    wallet: t.hex().notNull(),
    payout: t.hex().notNull(),
    salt: t.hex().notNull(),
    blockNumber: t.bigint().notNull(),
    transactionHash: t.hex().notNull(),
    timestamp: t.bigint().notNull(),
  }),
  (table) => ({ walletIdx: index().on(table.chainId, table.wallet) }),
);

/** Sweeps of a wallet's balance to its payout (Swept). */
export const sweep = onchainTable(
  "sweep",
  (t) => ({
    id: t.text().primaryKey(), // `${chainId}:${txHash}:${logIndex}`
    chainId: t.integer().notNull(),
    wallet: t.hex().notNull(),
    token: t.hex().notNull(),
    payout: t.hex().notNull(),
    amount: t.bigint().notNull(),
    fee: t.bigint().notNull(),
    feeRecipient: t.hex().notNull(),
    blockNumber: t.bigint().notNull(),
    transactionHash: t.hex().notNull(),
    logIndex: t.integer().notNull(),
    timestamp: t.bigint().notNull(),
  }),
  (table) => ({ walletIdx: index().on(table.chainId, table.wallet), txIdx: index().on(table.transactionHash) }),
);
