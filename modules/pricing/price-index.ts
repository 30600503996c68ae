import { zeroAddress } from "viem";
import { CHAINS, chainInfo } from "../../chains/registry.js";
import type { Config } from "../../core/config.js";
import { logger } from "../../core/log.js";
import { decimalLiteralToFixed, formatPrice18, PRICE_DECIMALS } from "../../core/money.js";
import { field, JsonNumber, parseJsonLossless, type LosslessJson } from "./lossless-json.js";

/**
 * The price index provider adapter. It speaks the CoinGecko API (v3) subset below, so production
 * points PRICE_API_URL at `https://pro-api.coingecko.com/api/v3` (or the public
 * `https://api.coingecko.com/api/v3`) and tests at the local stand-in (test/helpers/price-index-server.ts):
 *
 *   GET {base}/simple/token_price/{platform}?contract_addresses={addr}&vs_currencies=usd
 *       -> { "<addr lowercase>": { "usd": 1.0001 } }
 *   GET {base}/simple/price?ids={coinId}&vs_currencies=usd                 (native coins)
 *       -> { "<coinId>": { "usd": 3000.12 } }
 *   GET {base}/coins/{platform}/contract/{addr}
 *       -> { name, symbol, image: {thumb, small, large}, detail_platforms: {<platform>: {decimal_place, contract_address}},
 *            market_data: {current_price: {usd}} }                          (404 when the provider does not know it)
 *   GET {base}/coins/{coinId}?localization=false&tickers=false&community_data=false&developer_data=false  (native coins)
 *
 * PRICE_API_KEY is sent as `x-cg-pro-api-key` (`x-cg-demo-api-key` when the base URL is the public
 * api.coingecko.com host, which is how CoinGecko's demo keys work).
 *
 * Outcomes are three-valued so callers can tell "the provider has no price" (`none`) from "the
 * provider could not be asked" (`error`: network error, 5 s timeout, non-2xx, unparseable body).
 * A zero, negative, missing or malformed price is `none`. Without PRICE_API_URL the provider is
 * not configured and every lookup is `none` (a self-hosted service may run on the oracle alone).
 *
 * Prices are read from the raw response text (parseJsonLossless) and converted to 18-decimal fixed
 * point exactly; digits beyond 18 decimals are cut (floor). A price below 1e-18 USD is `none`.
 */

const indexed = CHAINS.filter((c) => c.priceIndexed && c.priceIndexIds);
/** CoinGecko asset platform ids of the chains the provider covers (registry `priceIndexIds`). */
export const PRICE_INDEX_PLATFORMS: Readonly<Record<number, string>> = Object.fromEntries(
  indexed.map((c) => [c.chainId, c.priceIndexIds!.platform]),
);
/** CoinGecko coin ids of those chains' native coins (the platforms' `native_coin_id`). */
export const NATIVE_COIN_IDS: Readonly<Record<number, string>> = Object.fromEntries(
  indexed.map((c) => [c.chainId, c.priceIndexIds!.nativeCoin]),
);

export const PRICE_INDEX_TIMEOUT_MS = 5_000;

export type ProviderOutcome<T> = { status: "ok"; value: T } | { status: "none"; reason: string } | { status: "error"; error: string };

export type IndexedPrice = {
  /** USD price, 18 decimals, > 0. */
  priceUsd18: bigint;
  /** The same price as a decimal string (formatPrice18 of priceUsd18). */
  priceUsd: string;
};

export type IndexedMetadata = {
  name: string | null;
  /** Upper-cased (the provider only has lower-case symbols). */
  symbol: string | null;
  /** Decimals on the asked chain; null when the provider does not say. */
  decimals: number | null;
  logo: string | null;
  price: IndexedPrice | null;
};

/** The provider's platform id of a chain, only for registry chains marked `priceIndexed`. */
export function priceIndexPlatform(chainId: number): string | undefined {
  return chainInfo(chainId)?.priceIndexed ? PRICE_INDEX_PLATFORMS[chainId] : undefined;
}

/** A provider price value (a JSON number literal, or a decimal string) to an IndexedPrice; null when not a positive price. */
export function toIndexedPrice(v: LosslessJson | undefined): IndexedPrice | null {
  const literal = v instanceof JsonNumber ? v.literal : typeof v === "string" ? v : null;
  if (literal === null) return null;
  const priceUsd18 = decimalLiteralToFixed(literal, PRICE_DECIMALS, "floor");
  if (priceUsd18 === null || priceUsd18 <= 0n) return null;
  return { priceUsd18, priceUsd: formatPrice18(priceUsd18) };
}

export type PriceIndexOptions = {
  baseUrl: string;
  apiKey?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
  log?: (msg: string) => void;
};

type Fetched = { status: "ok"; body: LosslessJson } | { status: "not_found" } | { status: "error"; error: string };

export class PriceIndexClient {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly log: (msg: string) => void;

  constructor(opts: PriceIndexOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, "");
    this.headers = { accept: "application/json" };
    if (opts.apiKey) {
      let host = "";
      try {
        host = new URL(this.base).hostname;
      } catch {
        /* an invalid URL fails on the first request */
      }
      this.headers[host === "api.coingecko.com" ? "x-cg-demo-api-key" : "x-cg-pro-api-key"] = opts.apiKey;
    }
    this.timeoutMs = opts.timeoutMs ?? PRICE_INDEX_TIMEOUT_MS;
    this.fetchImpl = opts.fetch ?? fetch;
    this.log = opts.log ?? ((m) => logger("price-index").warn(m));
  }

  private async get(path: string): Promise<Fetched> {
    const url = `${this.base}${path}`;
    try {
      const res = await this.fetchImpl(url, { headers: this.headers, signal: AbortSignal.timeout(this.timeoutMs), redirect: "follow" });
      const text = await res.text();
      if (res.status === 404) return { status: "not_found" };
      if (!res.ok) {
        this.log(`GET ${path} -> HTTP ${res.status}`);
        return { status: "error", error: `HTTP ${res.status}` };
      }
      try {
        return { status: "ok", body: parseJsonLossless(text) };
      } catch (e) {
        this.log(`GET ${path} -> malformed JSON (${(e as Error).message})`);
        return { status: "error", error: "malformed response" };
      }
    } catch (e) {
      const err = e as Error;
      const msg =
        err.name === "TimeoutError" || err.name === "AbortError" ? `timeout after ${this.timeoutMs} ms` : `${err.name}: ${err.message}`;
      this.log(`GET ${path} -> ${msg}`);
      return { status: "error", error: msg };
    }
  }

  /** USD price of a token (the zero address: the chain's native coin) on a covered chain. */
  async tokenPrice(chainId: number, address: string): Promise<ProviderOutcome<IndexedPrice>> {
    const platform = priceIndexPlatform(chainId);
    if (!platform) return { status: "none", reason: "chain not covered by the price index" };
    const addr = address.toLowerCase();
    const native = addr === zeroAddress;
    const key = native ? NATIVE_COIN_IDS[chainId]! : addr;
    const path = native
      ? `/simple/price?ids=${encodeURIComponent(key)}&vs_currencies=usd`
      : `/simple/token_price/${platform}?contract_addresses=${addr}&vs_currencies=usd`;
    const r = await this.get(path);
    // A 404 on the simple endpoints means a wrong base URL, not an unknown token (that is `{}`).
    if (r.status === "not_found") {
      this.log(`GET ${path} -> HTTP 404`);
      return { status: "error", error: "HTTP 404" };
    }
    if (r.status === "error") return r;
    const entry = field(r.body, key) ?? caseInsensitiveField(r.body, key);
    const price = toIndexedPrice(field(entry, "usd"));
    return price ? { status: "ok", value: price } : { status: "none", reason: "no price" };
  }

  /** Name, symbol, decimals, logo and price of a token (the zero address: the native coin). */
  async tokenMetadata(chainId: number, address: string): Promise<ProviderOutcome<IndexedMetadata>> {
    const platform = priceIndexPlatform(chainId);
    if (!platform) return { status: "none", reason: "chain not covered by the price index" };
    const addr = address.toLowerCase();
    const native = addr === zeroAddress;
    const path = native
      ? `/coins/${encodeURIComponent(NATIVE_COIN_IDS[chainId]!)}?localization=false&tickers=false&community_data=false&developer_data=false`
      : `/coins/${platform}/contract/${addr}`;
    const r = await this.get(path);
    if (r.status === "not_found") return { status: "none", reason: "unknown token" };
    if (r.status === "error") return r;
    const body = r.body;
    const image = field(body, "image");
    const logo =
      [field(image, "small"), field(image, "thumb"), field(image, "large")].find(
        (x): x is string => typeof x === "string" && x.length > 0,
      ) ?? null;
    const dp = field(field(field(body, "detail_platforms"), platform), "decimal_place");
    let decimals = dp instanceof JsonNumber && /^\d{1,2}$/.test(dp.literal) ? Number(dp.literal) : null;
    if (native) decimals = 18;
    const name = field(body, "name");
    const symbol = field(body, "symbol");
    return {
      status: "ok",
      value: {
        name: typeof name === "string" && name ? name : null,
        symbol: typeof symbol === "string" && symbol ? symbol.toUpperCase() : null,
        decimals,
        logo,
        price: toIndexedPrice(field(field(field(body, "market_data"), "current_price"), "usd")),
      },
    };
  }
}

function caseInsensitiveField(body: LosslessJson, key: string): LosslessJson | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body) || body instanceof JsonNumber) return undefined;
  const k = Object.keys(body).find((x) => x.toLowerCase() === key);
  return k === undefined ? undefined : body[k];
}

/** The provider client of a configuration, or null when PRICE_API_URL is not set. */
export function priceIndexFromConfig(
  config: Pick<Config, "PRICE_API_URL" | "PRICE_API_KEY">,
  opts: Partial<PriceIndexOptions> = {},
): PriceIndexClient | null {
  if (!config.PRICE_API_URL) return null;
  return new PriceIndexClient({ baseUrl: config.PRICE_API_URL, apiKey: config.PRICE_API_KEY, ...opts });
}
