import { createPublicClient, type Chain, type PublicClient } from "viem";
import { rpcPool, type RpcObserver, type RpcPool } from "./rpc-pool.js";
import type { ActiveChain } from "./runtime.js";

/** A viem chain object for a registry chain (viem needs one to sign transactions). */
export function viemChain(c: ActiveChain): Chain {
  const native = c.native ?? { symbol: "ETH", decimals: 18 };
  return {
    id: c.chainId,
    name: c.name,
    nativeCurrency: { name: native.symbol, symbol: native.symbol, decimals: 18 },
    rpcUrls: { default: { http: c.rpcUrls ?? [c.rpcUrl] } },
    contracts: { multicall3: { address: c.multicall3 } },
  };
}

export type ChainClients = {
  clients: Map<number, PublicClient>;
  /** Each chain's providers and what the pool knows of them (health, metrics, start-up checks). */
  pools: Map<number, RpcPool>;
};

export type PoolOptions = { observer?: RpcObserver; maxLagBlocks?: number; timeoutMs?: number; client?: "service" | "indexer" };

/**
 * A chain's providers (RPC_URL_<chainId>) behind one pool (chains/rpc-pool.ts), the way the service and the indexer
 * both read them. Requests carry `x-chainpay-client`, so a provider's logs (and the tests' proxies) tell them apart.
 *
 * @example
 * const pool = chainRpcPool(chain, { client: "indexer", timeoutMs: 10_000 });
 */
export function chainRpcPool(c: ActiveChain, opts: PoolOptions = {}): RpcPool {
  return rpcPool({
    chainId: c.chainId,
    urls: c.rpcUrls ?? [c.rpcUrl],
    maxRps: c.rpcMaxRps,
    timeoutMs: opts.timeoutMs ?? 10_000,
    maxLagBlocks: opts.maxLagBlocks,
    // A head read per provider about once a block (at least every 2 s, at most every 250 ms), while the pool is used.
    probeIntervalMs: Math.min(2_000, Math.max(250, c.fees?.blockTimeMs ?? 2_000)),
    headers: { "x-chainpay-client": opts.client ?? "service" },
    observer: opts.observer,
  });
}

/**
 * One public client per chain over its providers (chainRpcPool).
 *
 * @example
 * const { clients, pools } = chainClients(activeChains(), { observer: { request: observeRpc } });
 */
export function chainClients(chains: ActiveChain[], opts: PoolOptions = {}): ChainClients {
  const clients = new Map<number, PublicClient>();
  const pools = new Map<number, RpcPool>();
  for (const c of chains) {
    const pool = chainRpcPool(c, opts);
    pools.set(c.chainId, pool);
    clients.set(c.chainId, createPublicClient({ chain: viemChain(c), transport: pool.transport }) as PublicClient);
  }
  return { clients, pools };
}

/** The public clients alone (tools and tests that need no pool state). */
export function publicClients(chains: ActiveChain[]): Map<number, PublicClient> {
  return chainClients(chains).clients;
}
