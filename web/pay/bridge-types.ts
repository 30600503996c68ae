/**
 * What the payer page's "Pay with another token or network" section knows (embedded by template.ts as the
 * `bridge-state` block, read by bridge-client.ts): the networks and tokens the payer may pay from. Types only, so
 * the browser script and the server share them.
 */

export type BridgeSourceToken = {
  address: string;
  symbol: string;
  decimals: number;
  /** The chain's native coin (address 0x0…0): read with eth_getBalance, sent as the transaction's value, no approval. */
  native: boolean;
  /** A stablecoin: with a stablecoin payment, the fees are shown as the difference of the two amounts. */
  stable: boolean;
};

export type BridgeSourceChain = { chainId: number; name: string; nativeSymbol: string | null; tokens: BridgeSourceToken[] };

/** Solana as a source (DLN's 7565164): wallets through Wallet Standard on `walletChain`; balances from the holdings route. */
export type BridgeSolanaSource = {
  chainId: number;
  name: string;
  nativeSymbol: string;
  nativeDecimals: number;
  /** The Wallet Standard chain a wallet must support: `solana:mainnet`, or `solana:localnet` on the local stack. */
  walletChain: string;
  tokens: { address: string; symbol: string; decimals: number; stable: boolean }[];
};

export type PayerBridgeState = {
  /** Every network the service knows but the payment's own (the bridge needs two different networks). */
  chains: BridgeSourceChain[];
  /** Solana payers, when SOLANA_RPC_URL is set; null otherwise. */
  solana: BridgeSolanaSource | null;
  /** Whether the payment's token is a stablecoin. */
  dstStable: boolean;
};
