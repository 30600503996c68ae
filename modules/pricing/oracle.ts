import type { PublicClient } from "viem";
import { priceOracleAbi } from "../../abis/PriceOracle.js";
import type { AppDeps } from "../../core/deps.js";
import { firstLine, logger } from "../../core/log.js";
import type { ActiveChain } from "../../chains/runtime.js";

/**
 * The on-chain PriceOracle: USD prices with 18 decimals keyed by symbol
 * (`getPrice(string) returns (uint256 price, uint256 updatedAt)`, (0, 0) when unknown).
 *
 * Which oracle answers:
 * - for a token on a chain: that chain's oracle when the chain has one (ORACLE_ADDRESS_<chainId> or
 *   the deployments file), else the default oracle;
 * - for a bare symbol (GET /oracle/price): the default oracle.
 * The default oracle is the oracle of the first active chain, in registry order (1, 137, 56, 8453,
 * 42161, 777178, 11155111, 777177), that has one. Prices are per symbol, not per chain, so an
 * operator runs one oracle (typically on the service chain) or keeps several in sync.
 *
 * Results: a price, `null` (the oracle has no non-zero price, or no oracle is configured at all),
 * or a thrown OracleUnavailableError (the RPC failed or the oracle address holds no oracle): the
 * callers report a failed source rather than "no price".
 */

export class OracleUnavailableError extends Error {
  constructor(
    message: string,
    readonly chainId: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "OracleUnavailableError";
  }
}

export type OraclePrice = {
  /** Symbol as looked up (normalized). */
  symbol: string;
  /** USD price with 18 decimals, > 0. */
  priceRaw: bigint;
  /** When the price was last set on chain. */
  updatedAt: Date;
  /** Chain whose oracle answered. */
  chainId: number;
  /** The chain's time when it answered (its latest block's): ages are counted by the chain's clock. */
  readAt: Date;
};

/** Symbols longer than this are not looked up (no token symbol is this long; keeps calldata small). */
export const MAX_ORACLE_SYMBOL_LENGTH = 32;

/** Oracle key of a token symbol: trimmed, upper-cased, `USDT0` -> `USDT`. */
export function normalizeOracleSymbol(symbol: string): string {
  const s = symbol.trim().toUpperCase();
  return s === "USDT0" ? "USDT" : s;
}

type OracleDeps = Pick<AppDeps, "chains" | "clients">;

/**
 * The oldest our PriceOracle's price may be, in seconds (0: not checked): ORACLE_MAX_AGE_S, else, with the price pusher
 * keeping it, the pusher's heartbeat plus 10 minutes (a missed pass or two), else 0 (prices set by hand).
 */
export function oracleMaxAgeS(
  config: Pick<AppDeps["config"], "ORACLE_MAX_AGE_S" | "PRICE_PUSHER_PRIVATE_KEY" | "PRICE_PUSHER_HEARTBEAT_S">,
) {
  if (config.ORACLE_MAX_AGE_S !== undefined) return config.ORACLE_MAX_AGE_S;
  return config.PRICE_PUSHER_PRIVATE_KEY ? (config.PRICE_PUSHER_HEARTBEAT_S ?? 3600) + 600 : 0;
}

/** `price` itself, or OracleUnavailableError when it is older than `maxAgeS` (0: any age) by the chain's clock. */
export function freshOrThrow(price: OraclePrice, maxAgeS: number): OraclePrice {
  const age = price.readAt.getTime() - price.updatedAt.getTime();
  if (maxAgeS > 0 && age > maxAgeS * 1000)
    throw new OracleUnavailableError(
      `PriceOracle ${price.symbol} on chain ${price.chainId}: stale, set ${Math.round(age / 1000)} s ago (ORACLE_MAX_AGE_S ${maxAgeS})`,
      price.chainId,
    );
  return price;
}

/** The chain whose oracle serves symbol-only lookups (see the module comment). */
export function defaultOracleChain(deps: Pick<AppDeps, "chains">): ActiveChain | undefined {
  return deps.chains.find((c) => c.oracle);
}

/** The chain whose oracle prices tokens of `chainId`: its own, else the default one. */
export function oracleChainFor(deps: Pick<AppDeps, "chains">, chainId?: number): ActiveChain | undefined {
  const own = chainId === undefined ? undefined : deps.chains.find((c) => c.chainId === chainId && c.oracle);
  return own ?? defaultOracleChain(deps);
}

/** Reads one oracle; null when its price is 0. Throws OracleUnavailableError on RPC/contract failure. */
export async function readOracleAt(
  client: PublicClient,
  chainId: number,
  oracle: `0x${string}`,
  symbol: string,
): Promise<OraclePrice | null> {
  const key = normalizeOracleSymbol(symbol);
  if (!key || key.length > MAX_ORACLE_SYMBOL_LENGTH) return null;
  let result: readonly [bigint, bigint];
  let block: { timestamp: bigint };
  try {
    [result, block] = await Promise.all([
      client.readContract({ address: oracle, abi: priceOracleAbi, functionName: "getPrice", args: [key] }),
      client.getBlock({ blockTag: "latest" }),
    ]);
  } catch (e) {
    logger("oracle").warn({ chainId, key, error: firstLine(e) }, "getPrice failed");
    throw new OracleUnavailableError(`oracle read failed on chain ${chainId}`, chainId, { cause: e });
  }
  const [priceRaw, updatedAt] = result;
  if (priceRaw <= 0n) return null;
  return {
    symbol: key,
    priceRaw,
    updatedAt: new Date(Number(updatedAt) * 1000),
    chainId,
    readAt: new Date(Number(block.timestamp) * 1000),
  };
}

/**
 * The oracle price of `symbol` for tokens of `chainId` (or the default oracle when chainId is
 * omitted). Null when the price is 0 or no oracle is configured; throws OracleUnavailableError.
 */
export async function readOraclePrice(deps: OracleDeps, symbol: string, opts: { chainId?: number } = {}): Promise<OraclePrice | null> {
  const chain = oracleChainFor(deps, opts.chainId);
  if (!chain?.oracle) return null;
  const client = deps.clients.get(chain.chainId);
  if (!client) throw new OracleUnavailableError(`no RPC client for chain ${chain.chainId}`, chain.chainId);
  return readOracleAt(client, chain.chainId, chain.oracle, symbol);
}
