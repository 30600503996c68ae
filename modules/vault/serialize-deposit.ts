import { getAddress } from "viem";

/** A `vault_deposits` row as pg returns it (numeric columns as strings), with its user's external id. */
export type DepositRow = {
  id: string;
  vault_id: string;
  merchant_id: string;
  vault_user_id: string;
  external_user_id: string;
  chain_id: number;
  address: string;
  payout: string;
  token_address: string;
  token_symbol: string;
  token_decimals: number | null;
  amount: string;
  fee: string;
  net_amount: string;
  status: DepositStatus;
  hold: DepositHold | null;
  recover_requested_at: Date | null;
  transfer_id: string;
  deposit_tx_hash: string | null;
  block_number: string;
  log_index: number;
  sweep_id: string | null;
  process_tx_hash: string | null;
  processed_at: Date | null;
  attempts: number;
  next_attempt_at: Date | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
};

/** The spec's statuses: the API shows and filters by them. */
export const DEPOSIT_STATUSES = ["detected", "processing", "completed", "failed"] as const;
/**
 * `held` (extension, listed and filterable): its sender failed sanctions screening (modules/sanctions/vault.ts); its
 * (address, token) is not swept until the operator releases it. `returned` (extension): the operator sent a held
 * deposit's funds to an address of their choice (`sanctions return`); final. The statuses a listed deposit can show.
 */
export const LISTED_DEPOSIT_STATUSES = [...DEPOSIT_STATUSES, "held", "returned"] as const;
/** `dropped`: voided, its transfer rolled back by a re-org before any sweep took it; never listed or counted. */
export type DepositStatus = (typeof LISTED_DEPOSIT_STATUSES)[number] | "dropped";

/** Why a detected deposit is not swept on its own. */
export type DepositHold = "below_minimum" | "token_not_enabled";

/** The spec's Deposit (GET /vault/v1/deposits), plus `tokenAddress`, `depositAddress` and `hold` (extensions). */
export type Deposit = {
  depositId: string;
  externalUserId: string;
  /** Smallest token units. */
  amount: string;
  fee: string;
  netAmount: string;
  chainId: number;
  tokenSymbol: string;
  status: DepositStatus;
  /** Null for a deposit recorded from the address's balance (funds that arrived while the address was not watched). */
  depositTxHash: string | null;
  processTxHash: string | null;
  /** Unix ms. */
  createdAt: number;
  processedAt: number | null;
  /** Checksummed token contract. */
  tokenAddress: string;
  /** Checksummed deposit address the transfer went to. */
  depositAddress: string;
  /** Why a detected deposit waits: `below_minimum` (at most 0.001 tokens) or `token_not_enabled`; null otherwise. */
  hold: DepositHold | null;
};

export function depositView(r: DepositRow): Deposit {
  return {
    depositId: r.id,
    externalUserId: r.external_user_id,
    amount: r.amount,
    fee: r.fee,
    netAmount: r.net_amount,
    chainId: r.chain_id,
    tokenSymbol: r.token_symbol,
    status: r.status,
    depositTxHash: r.deposit_tx_hash,
    processTxHash: r.process_tx_hash,
    createdAt: r.created_at.getTime(),
    processedAt: r.processed_at?.getTime() ?? null,
    tokenAddress: getAddress(r.token_address),
    depositAddress: getAddress(r.address),
    hold: r.hold,
  };
}

/** `data` of a Vault webhook (spec "Vault webhooks"), exactly these fields; `timestamp` is the event time (Unix ms). */
export function depositWebhookData(r: DepositRow, timestamp: number) {
  return {
    depositId: r.id,
    externalUserId: r.external_user_id,
    amount: r.amount,
    fee: r.fee,
    netAmount: r.net_amount,
    tokenSymbol: r.token_symbol,
    tokenAddress: getAddress(r.token_address),
    chainId: r.chain_id,
    depositAddress: getAddress(r.address),
    status: r.status,
    depositTxHash: r.deposit_tx_hash,
    processTxHash: r.process_tx_hash,
    timestamp,
  };
}
