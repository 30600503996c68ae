import type { PublicClient } from "viem";

/** How long a chain's gas price is reused for new quotes: a few blocks at most on any supported chain. */
export const GAS_PRICE_TTL_MS = 2_000;

type Entry = { wei: bigint; at: number } | undefined;

/**
 * A chain's gas price for quotes, read at most once per `ttlMs` per client: concurrent callers share one
 * `eth_gasPrice` call (single flight), and an answer older than `ttlMs` is never used (the caller waits for
 * the fresh one). A failed read is not cached. Per client object, so each process and test has its own.
 *
 * @example
 * const wei = await cachedGasPrice(deps.clients.get(137)!);
 */
export function cachedGasPrice(client: PublicClient, ttlMs = GAS_PRICE_TTL_MS): Promise<bigint> {
  // Real elapsed time, not the service clock (tests move or stop that one).
  const now = performance.now();
  const entry: Entry = last.get(client);
  if (entry && now - entry.at < ttlMs) return Promise.resolve(entry.wei);
  let flight = inFlight.get(client);
  if (!flight) {
    flight = client
      .getGasPrice()
      .then((wei) => {
        last.set(client, { wei, at: performance.now() });
        return wei;
      })
      .finally(() => inFlight.delete(client));
    inFlight.set(client, flight);
  }
  return flight;
}

const last = new WeakMap<PublicClient, NonNullable<Entry>>();
const inFlight = new WeakMap<PublicClient, Promise<bigint>>();
