import { findToken, type ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { bridgeAuthority } from "../../modules/bridge/index.js";
import type { PublicPaymentView } from "../../modules/payments/index.js";
import { SOLANA, solanaWalletChain } from "../../chains/solana.js";
import type { BridgeSolanaSource, BridgeSourceChain, PayerBridgeState } from "./bridge-types.js";

const NATIVE = "0x0000000000000000000000000000000000000000";

/**
 * The networks and tokens the payer page offers to pay from through the bridge, or null when cross-chain payments
 * are off (no BRIDGE_API_URL or no order authority, as modules/bridge/orders.ts decides) or nothing is left to offer.
 * Every chain the service runs but the payment's own (the bridge refuses same-chain orders); where the deployment
 * names bridge contracts (the local stack), only the chains that have them. Tokens: the chain's tokens and its
 * native coin; the page keeps those the wallet holds. No RPC URL leaves the server (they may carry keys).
 * @example payerBridgeState(deps, view)?.chains.map((c) => c.chainId) // [137] for a payment on 777177
 */
export function payerBridgeState(
  deps: Pick<AppDeps, "config" | "chains">,
  view: Pick<PublicPaymentView, "chainId" | "token">,
): PayerBridgeState | null {
  if (!deps.config.BRIDGE_API_URL || !bridgeAuthority(deps.config)) return null;
  const withContracts = deps.chains.some((c) => c.bridgeSource);
  const chains = deps.chains
    .filter((c) => c.chainId !== view.chainId && (!withContracts || c.bridgeSource))
    .map(sourceChain)
    .filter((c) => c.tokens.length > 0);
  const solana = deps.config.SOLANA_RPC_URL ? solanaSource(deps.config.SOLANA_CLUSTER) : null;
  if (!chains.length && !solana) return null;
  const own = deps.chains.find((c) => c.chainId === view.chainId);
  return { chains, solana, dstStable: (own && findToken(own, view.token.address)?.kind) === "stablecoin" };
}

function solanaSource(cluster: "mainnet" | "localnet"): BridgeSolanaSource {
  return {
    chainId: SOLANA.dlnChainId,
    name: SOLANA.name,
    nativeSymbol: SOLANA.nativeSymbol,
    nativeDecimals: SOLANA.decimals,
    walletChain: solanaWalletChain(cluster),
    tokens: SOLANA.tokens.map((t) => ({ address: t.mint, symbol: t.symbol, decimals: t.decimals, stable: t.symbol === "USDC" })),
  };
}

function sourceChain(c: ActiveChain): BridgeSourceChain {
  const tokens = c.tokens.map((t) => ({
    address: t.address,
    symbol: t.symbol,
    decimals: t.decimals,
    native: false,
    stable: t.kind === "stablecoin",
  }));
  if (c.native) tokens.push({ address: NATIVE, symbol: c.native.symbol, decimals: c.native.decimals, native: true, stable: false });
  return { chainId: c.chainId, name: c.name, nativeSymbol: c.native?.symbol ?? null, tokens };
}
