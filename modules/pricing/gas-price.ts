import type { PublicClient } from "viem";
import { scopedCache } from "../../core/ttl-cache.js";

/** How long a chain's gas price is reused for new quotes: a few blocks at most on any supported chain. */
export const GAS_PRICE_TTL_MS = 2_000;

// One entry per client object, so each process and test has its own (core/ttl-cache.ts).
const gasPrices = scopedCache<{ wei: bigint }>(1);

/**
 * A chain's gas price for quotes, read at most once per `ttlMs` per client: concurrent callers share one
 * `eth_gasPrice` call (single flight), and an answer older than `ttlMs` is never used (the caller waits for
 * the fresh one). A failed read is not cached.
 *
 * @example
 * const wei = await cachedGasPrice(deps.clients.get(137)!);
 */
export async function cachedGasPrice(client: PublicClient, ttlMs = GAS_PRICE_TTL_MS): Promise<bigint> {
  const entry = await gasPrices(client, ttlMs).get("gasPrice", async () => ({ wei: await client.getGasPrice() }));
  return entry!.wei;
}
