import { zeroAddress } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { chainInfo, type TokenKind } from "../../chains/registry.js";
import { formatPrice18, ONE_USD18, PRICE_DECIMALS, tryParseAmount } from "../../core/money.js";
import { feedCheckOf, readChainlinkPrice } from "./chainlink.js";
import { freshOrThrow, normalizeOracleSymbol, oracleMaxAgeS, OracleUnavailableError, readOraclePrice } from "./oracle.js";
import { priceIndexFromConfig, type PriceIndexClient } from "./price-index.js";
import { scopedCache } from "../../core/ttl-cache.js";

/**
 * USD price of a payment token (spec "Price resolution"):
 *   stablecoins (registry kind "stablecoin")  -> "1"                        source `stablecoin`
 *   (1) price index provider by chain+address -> if a valid non-zero price   source `indexer`
 *   (2) on-chain oracle by oracle symbol      -> if non-zero                 source `trusted_oracle`
 *       (registry tokens and operator-trusted ones only: see PriceToken.oracleSymbol)
 *   (3) customPriceUsd                        -> a positive decimal string   source `custom`
 *   otherwise no price.
 * customPriceUsd is ignored whenever (1) or (2) has a price. Only the registry's kind makes a
 * stablecoin: a custom token that calls itself "USDT" is priced like any other token.
 *
 * "No price" versus "unavailable": every source answers `has a price`, `has none`, or `failed`
 * (provider down/timeout/non-2xx, RPC error). A failed source is skipped for the next one, so a
 * provider outage falls back to the oracle. But when no source above customPriceUsd produced a
 * price and at least one of them FAILED, we cannot know whether the failed source would have
 * priced the token (and overruled customPriceUsd), so the result is `unavailable`, never `none`
 * and never the custom price: payment creation fails with Unavailable `Oracle price unavailable`
 * (retry after a few seconds) instead of failing permanently or pricing with a stale snapshot.
 *
 * Two entry points:
 * - lookupTokenPrice(): the three-valued result `{status: "ok" | "none" | "unavailable"}`;
 * - resolveTokenPriceUsd(): the price or null, and throws PriceUnavailableError for `unavailable`.
 */

export type PriceSource = "indexer" | "trusted_oracle" | "custom" | "stablecoin";

export type ResolvedPrice = {
  /** Decimal string, at most 18 fraction digits, no trailing zeros ("1", "0.000012345678901234"). */
  priceUsd: string;
  /** The same price, 18 decimals, > 0: feed this to lib/fees.ts. */
  priceUsd18: bigint;
  source: PriceSource;
  /** When the price was set: on chain (trusted_oracle: the feed's or the PriceOracle's), or read (indexer). */
  updatedAt?: Date;
};

export type PriceLookup =
  | { status: "ok"; price: ResolvedPrice; /** sources that failed before this one answered */ skipped: string[] }
  | { status: "none" }
  | { status: "unavailable"; errors: string[] };

export class PriceUnavailableError extends Error {
  constructor(readonly errors: string[]) {
    super(`price source unavailable: ${errors.join("; ")}`);
    this.name = "PriceUnavailableError";
  }
}

export type PriceToken = {
  /** Contract address; the zero address for a native coin. */
  address: string;
  /** Token symbol (from the registry or the contract), for display. */
  symbol?: string | null;
  kind: TokenKind;
  /**
   * The oracle symbol that prices this address (registry `oracleSymbol`, USDT0 -> USDT; an operator-trusted custom
   * token's symbol; the symbol a caller of GET /tokens/price names). Absent or empty: the oracle is not asked, since a
   * contract's own symbol proves nothing.
   */
  oracleSymbol?: string | null;
};

export type ResolveArgs = {
  deps: Pick<AppDeps, "config" | "chains" | "clients">;
  chainId: number;
  token: PriceToken;
  /** Merchant-supplied USD price per token (positive decimal string, max 18 fraction digits). Invalid values count as absent. */
  customPriceUsd?: string | null;
  /** Provider client override (tests); defaults to the one configured by PRICE_API_URL / PRICE_API_KEY. */
  priceIndex?: PriceIndexClient | null;
  /** Reuse market prices up to PRICE_CACHE_TTL_MS old (payment quotes); otherwise ask the sources now. */
  cached?: boolean;
};

/** A customPriceUsd string to 18-decimal fixed point; null when it is not a positive decimal with <= 18 fraction digits. */
export function parseCustomPriceUsd(v: unknown): bigint | null {
  const p = tryParseAmount(v, PRICE_DECIMALS, { strict: true });
  return p !== null && p > 0n ? p : null;
}

export async function lookupTokenPrice(args: ResolveArgs): Promise<PriceLookup> {
  const market = args.cached ? await cachedMarketPrice(args) : await lookupMarketPrice(args);
  if (market.status !== "none") return market;
  // (3) merchant's custom price
  const custom = parseCustomPriceUsd(args.customPriceUsd);
  if (custom !== null)
    return { status: "ok", price: { priceUsd: formatPrice18(custom), priceUsd18: custom, source: "custom" }, skipped: [] };
  return { status: "none" };
}

/** Sources (1) and (2), and stablecoins: what any caller would be told about this token now. */
async function lookupMarketPrice(args: ResolveArgs): Promise<PriceLookup> {
  const { deps, chainId, token } = args;
  if (token.kind === "stablecoin")
    return { status: "ok", price: { priceUsd: "1", priceUsd18: ONE_USD18, source: "stablecoin" }, skipped: [] };

  const errors: string[] = [];

  // (1) price index provider
  const index = args.priceIndex !== undefined ? args.priceIndex : priceIndexFromConfig(deps.config);
  let indexed: ResolvedPrice | null = null;
  if (index) {
    const r = await index.tokenPrice(chainId, token.address);
    if (r.status === "ok")
      indexed = { priceUsd: r.value.priceUsd, priceUsd18: r.value.priceUsd18, source: "indexer", updatedAt: new Date() };
    else if (r.status === "error") errors.push(`price index: ${r.error}`);
  }
  const maxDeviation = BigInt(deps.config.PRICE_MAX_DEVIATION_BPS ?? 0);
  if (indexed && maxDeviation === 0n) return { status: "ok", price: indexed, skipped: [] };

  // (2) on-chain oracle by the symbol the caller trusts for this address: the chain's Chainlink feed, else our PriceOracle
  const symbol = token.oracleSymbol;
  let oracle: ResolvedPrice | null = null;
  if (symbol && normalizeOracleSymbol(symbol)) {
    try {
      const o = await readTrustedOracle(deps, chainId, symbol);
      if (o) oracle = { priceUsd: formatPrice18(o.priceRaw), priceUsd18: o.priceRaw, source: "trusted_oracle", updatedAt: o.updatedAt };
    } catch (e) {
      if (!(e instanceof OracleUnavailableError)) throw e;
      errors.push(`oracle: ${e.message}`);
    }
  }
  if (indexed && oracle) {
    // Both priced it: a provider or a feed gone wrong shows as a gap between them, and then neither is trusted.
    const gap = indexed.priceUsd18 > oracle.priceUsd18 ? indexed.priceUsd18 - oracle.priceUsd18 : oracle.priceUsd18 - indexed.priceUsd18;
    if (gap * 10_000n > maxDeviation * oracle.priceUsd18)
      return {
        status: "unavailable",
        errors: [
          `price index ${indexed.priceUsd} and oracle ${oracle.priceUsd} differ by more than ${maxDeviation} bps (PRICE_MAX_DEVIATION_BPS)`,
        ],
      };
  }
  if (indexed) return { status: "ok", price: indexed, skipped: [] };
  if (oracle) return { status: "ok", price: oracle, skipped: errors };
  return errors.length ? { status: "unavailable", errors } : { status: "none" };
}

/**
 * The trusted on-chain price of `symbol` for tokens of `chainId`: the chain's Chainlink feed when it has one for the
 * symbol (checked: modules/pricing/chainlink.ts), else our PriceOracle, no older than oracleMaxAgeS (ORACLE_MAX_AGE_S; with the pusher, on by default).
 */
async function readTrustedOracle(deps: ResolveArgs["deps"], chainId: number, symbol: string) {
  const chain = deps.chains.find((c) => c.chainId === chainId);
  const client = deps.clients.get(chainId);
  if (chain && client) {
    const feed = await readChainlinkPrice(client, chain, symbol, feedCheckOf(deps.config));
    if (feed) return feed;
  }
  const own = await readOraclePrice(deps, symbol, { chainId });
  return own && freshOrThrow(own, oracleMaxAgeS(deps.config));
}

const marketPrices = scopedCache<PriceLookup>(10_000);

/**
 * lookupMarketPrice through a cache of PRICE_CACHE_TTL_MS per process: concurrent quotes of a token share one
 * lookup, and an answer older than the TTL is never used. `unavailable` is not cached (the next quote asks again).
 */
function cachedMarketPrice(args: ResolveArgs): Promise<PriceLookup> {
  const { deps, chainId, token } = args;
  const cache = marketPrices(deps.clients, deps.config.PRICE_CACHE_TTL_MS);
  const key = `${chainId}:${token.address.toLowerCase()}:${token.kind}:${token.oracleSymbol ?? ""}`;
  return cache
    .get(key, async () => {
      const r = await lookupMarketPrice(args);
      if (r.status === "unavailable") throw new PriceUnavailableError(r.errors);
      return r;
    })
    .then(
      (r) => r!,
      (e: unknown) => {
        if (e instanceof PriceUnavailableError) return { status: "unavailable", errors: e.errors };
        throw e;
      },
    );
}

/**
 * The token's USD price by the spec's order, or null when no source has one.
 * Throws PriceUnavailableError when a source failed and nothing above customPriceUsd had a price
 * (payment creation: `Oracle price unavailable`).
 */
export async function resolveTokenPriceUsd(args: ResolveArgs): Promise<ResolvedPrice | null> {
  const r = await lookupTokenPrice(args);
  if (r.status === "ok") return r.price;
  if (r.status === "unavailable") throw new PriceUnavailableError(r.errors);
  return null;
}

/**
 * USD price of a chain's native coin (for gas estimates: lib/fees.ts gasFeeUsd18): provider, then
 * the oracle by the registry's native oracle symbol. Null when the chain has no native coin in the
 * registry or no source prices it; throws PriceUnavailableError like resolveTokenPriceUsd.
 */
export async function resolveNativePriceUsd(
  deps: ResolveArgs["deps"],
  chainId: number,
  priceIndex?: PriceIndexClient | null,
  opts: { cached?: boolean } = {},
): Promise<ResolvedPrice | null> {
  const native = chainInfo(chainId)?.native;
  if (!native) return null;
  return resolveTokenPriceUsd({
    deps,
    chainId,
    token: { address: zeroAddress, symbol: native.symbol, kind: "native", oracleSymbol: native.oracleSymbol },
    priceIndex,
    cached: opts.cached,
  });
}
