import { isAddress } from "@solana/kit";

/**
 * Solana as a bridge source (deBridge DLN). Not in the EVM registry (`CHAINS`, chains/registry.ts): Ponder indexes no
 * Solana, and payments are never made out to a Solana address. The payer's wallet signs DLN's transaction and the
 * service follows the order by its signature (docs/solana.md).
 */

export type SolanaToken = {
  /** The SPL mint (base58). */
  mint: string;
  decimals: number;
  symbol: string;
};

/** Wallet Standard chain ids (`@solana/wallet-standard-chains`) the payer page asks a wallet for. */
export const SOLANA_WALLET_CHAINS = {
  mainnet: "solana:mainnet",
  localnet: "solana:localnet",
} as const;

export type SolanaCluster = keyof typeof SOLANA_WALLET_CHAINS;
export type SolanaWalletChain = (typeof SOLANA_WALLET_CHAINS)[SolanaCluster];

/** Circle's USDC on Solana mainnet. The local stack places a mint at this same address (local/solana/). */
export const SOLANA_USDC: SolanaToken = { mint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", decimals: 6, symbol: "USDC" };

export const SOLANA = {
  /** deBridge DLN's id for Solana (its `srcChainId`/`dstChainId`), not an EVM chain id. */
  dlnChainId: 7565164,
  name: "Solana",
  nativeSymbol: "SOL",
  /** Lamports per SOL: 10^9. */
  decimals: 9,
  usdc: SOLANA_USDC,
  /** The SPL tokens a payer may bridge from. */
  tokens: [SOLANA_USDC] as readonly SolanaToken[],
  walletChains: SOLANA_WALLET_CHAINS,
} as const;

/** The Wallet Standard chain of a cluster: `solana:mainnet` unless the stack's `localnet`. */
export function solanaWalletChain(cluster: SolanaCluster = "mainnet"): SolanaWalletChain {
  return SOLANA_WALLET_CHAINS[cluster];
}

/**
 * A Solana address: base58 of 32 bytes (an ed25519 public key or a program-derived address). `0x…` hex, 31- or
 * 33-byte keys and characters outside base58 (0, O, I, l) are not.
 *
 *   isSolanaAddress("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"); // true
 *   isSolanaAddress("0x000000000000000000000000000000000000dEaD"); // false
 */
export function isSolanaAddress(value: unknown): value is string {
  return typeof value === "string" && isAddress(value);
}

/** The token of a mint among those a payer may bridge from, or undefined. */
export function solanaToken(mint: string): SolanaToken | undefined {
  return SOLANA.tokens.find((t) => t.mint === mint);
}
