/**
 * The cross-chain bridge as the payment side sees it: one small interface, with deBridge DLN's HTTP API as the real
 * adapter (modules/bridge/dln.ts) and, locally, a stand-in that speaks the same wire protocol (local/bridge/server.ts).
 *
 * Every payment order is a "reverse market order": the payer gives whatever the provider asks (`srcChainTokenInAmount
 * = auto`) so that the recipient gets an exact amount (what the payment still needs) on the destination chain.
 * Amounts are bigint smallest units; addresses are strings as the provider wrote them.
 *
 * Failures are domain errors (core/errors.ts): the provider refusing the request is `Invalid` (or `Conflict` for an
 * order that cannot be cancelled), the provider unreachable, slow, rate limiting or answering nonsense is `Unavailable`.
 */

/** A token side of a quote. */
export type BridgeTokenAmount = { address: string; chainId: number; decimals: number; symbol: string; amount: bigint };

/**
 * The transaction the payer signs on the source chain. EVM: approve `allowanceTarget ?? to` for the token amount first.
 * Solana (DLN's 7565164): `data` is 0x-hex of an unsigned VersionedTransaction, signed and sent by the payer's wallet.
 */
export type BridgeTx =
  | { kind: "evm"; to: string; data: string; value: bigint; allowanceTarget: string | null; allowanceValue: bigint | null }
  | { kind: "solana"; data: string };

export type BridgeQuote = {
  /** Deterministic id of the order the `tx` creates; null for an estimation (no tx). */
  orderId: string | null;
  /** What the payer gives: the amount includes the prepended operating expenses. */
  srcToken: BridgeTokenAmount & { operatingExpense: bigint | null };
  /** What the recipient gets: exactly the requested amount. */
  dstToken: BridgeTokenAmount;
  /**
   * What a cancelled order gives back on the source (DLN's `srcChainTokenOut`): the input itself, or for a pre-swapped
   * input the reserve asset it was swapped to (usually USDC), at the amount the order escrows. The creation `fixFee` is
   * refunded too, in the native coin.
   */
  refundToken: BridgeTokenAmount;
  /** The input is swapped to `refundToken` before the order is created (DLN's DeBridgeRouter). */
  preSwap: boolean;
  /** Flat protocol fee in the source chain's native coin (part of `tx.value`). */
  fixFee: bigint;
  /** Seconds the provider expects the fill to take. */
  estimatedFulfillmentSeconds: number | null;
  tx: BridgeTx | null;
};

export type QuoteRequest = {
  srcChainId: number;
  srcToken: string;
  dstChainId: number;
  dstToken: string;
  /** Exact amount the recipient must get, smallest units of `dstToken`. */
  dstAmount: bigint;
};

export type OrderTxRequest = QuoteRequest & {
  /** The payment's recipient address on the destination chain. */
  recipient: string;
  /** The payer's wallet (an EVM address, or a Solana base58 key): sender, source-chain order authority and refund address. */
  payer: string;
  /** Our order authority on the destination chain: the only one who may cancel. */
  dstAuthority: string;
};

/** DLN's order states (`GET /v1.0/dln/order/{id}/status`); `None`: unknown to the provider or not indexed yet. */
export const PROVIDER_ORDER_STATUSES = [
  "None",
  "Created",
  "Fulfilled",
  "SentUnlock",
  "ClaimedUnlock",
  "OrderCancelled",
  "SentOrderCancel",
  "ClaimedOrderCancel",
] as const;
export type ProviderOrderStatus = (typeof PROVIDER_ORDER_STATUSES)[number];

/** The cancel transaction: sent by `from` (the order's destination authority) on the destination chain `chainId`. */
export type BridgeCancelTx = { to: string; data: string; value: bigint; chainId: number; from: string; cancelBeneficiary: string };

export interface BridgeProvider {
  /** An estimation only (no addresses, no transaction): what the payer would give for `dstAmount`. */
  quote(req: QuoteRequest): Promise<BridgeQuote>;
  /** The quote with the payer's transaction and the order id it creates. */
  createOrderTx(req: OrderTxRequest): Promise<BridgeQuote & { orderId: string; tx: BridgeTx }>;
  orderStatus(orderId: string): Promise<ProviderOrderStatus>;
  /** The orders a source-chain transaction created (empty: none, or not indexed yet). */
  orderIdsOfTx(txHash: string): Promise<string[]>;
  /** The cancel transaction of an order; Conflict when the order can no longer be cancelled. */
  cancelTx(orderId: string): Promise<BridgeCancelTx>;
}
