import { createPublicClient, http, type Chain, type PublicClient } from "viem";
import type { ActiveChain } from "./runtime.js";

/** A viem chain object for a registry chain (viem needs one to sign transactions). */
export function viemChain(c: ActiveChain): Chain {
  const native = c.native ?? { symbol: "ETH", decimals: 18 };
  return {
    id: c.chainId,
    name: c.name,
    nativeCurrency: { name: native.symbol, symbol: native.symbol, decimals: 18 },
    rpcUrls: { default: { http: [c.rpcUrl] } },
    contracts: { multicall3: { address: c.multicall3 } },
  };
}

export function publicClients(chains: ActiveChain[]): Map<number, PublicClient> {
  return new Map(
    chains.map((c) => [
      c.chainId,
      createPublicClient({ chain: viemChain(c), transport: http(c.rpcUrl, { retryCount: 2, timeout: 10_000 }) }) as PublicClient,
    ]),
  );
}
