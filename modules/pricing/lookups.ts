import type { Address } from "viem";
import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { chainInfo } from "../../chains/registry.js";
import { Failed, Invalid, NotFound } from "../../core/errors.js";
import { formatPrice18 } from "../../core/money.js";
import { firstIssue } from "../../core/zod-issues.js";
import { freshOrThrow, normalizeOracleSymbol, oracleMaxAgeS, OracleUnavailableError, readOraclePrice } from "./oracle.js";
import { lookupTokenPrice } from "./resolve.js";
import { lookupTokenMetadata } from "./token-metadata.js";

/**
 * Public price and token lookups (no authentication): GET /tokens/price, GET /tokens/metadata,
 * GET /oracle/price. Errors carry the spec's messages, checked in the spec's order.
 *
 * Choices where the spec is silent:
 * - An empty query parameter counts as missing. `chainId` must be decimal digits only
 *   (`1.5`, `-1`, `0x89` -> `chainId must be a number`); surrounding whitespace is ignored.
 * - A chainId outside the registry: /tokens/price answers NotFound `Price not available for this
 *   token` (no source covers it); /tokens/metadata answers Invalid `Cannot read token contract` (we
 *   serve no such network). `Invalid network selected` belongs to POST /payments and is not used here.
 * - A registry chain without RPC in this deployment: /tokens/price still asks the provider (if the
 *   chain is covered) and the default oracle (oracles are keyed by symbol); /tokens/metadata uses
 *   the provider, else Invalid `Cannot read token contract`.
 * - /tokens/price consults the oracle only when `symbol` is given (spec), in resolve.ts's order
 *   (provider, then oracle; no stablecoin shortcut, no custom price). NotFound when every consulted
 *   source answered "no price"; Failed `Failed to fetch token price` when a consulted source failed
 *   (provider down, RPC error) and no other source had a price. A provider outage therefore still
 *   answers from the oracle when the oracle has the symbol.
 * - `timestamp` is when this answer was produced (the service clock), not the source's update time.
 * - `symbol` in /tokens/price echoes the query symbol upper-cased (USDT0 stays USDT0; the oracle is
 *   asked for USDT); /oracle/price answers with the normalized symbol (USDT0 -> USDT).
 * - The zero address is the native coin: priced by the provider's native coin id, described from
 *   the registry when the provider does not know it.
 */

type Query = Record<string, string | undefined>;
type LookupDeps = Pick<AppDeps, "config" | "chains" | "clients" | "now">;

const REQUIRED = "chainId and address are required";
/** A query parameter, trimmed; empty counts as missing. */
const given = z.string({ error: REQUIRED }).trim().min(1, REQUIRED);

/** GET /tokens/metadata `?chainId&address`: a missing one first, then chainId (decimal digits), then the address. */
export const tokenMetadataQuery = z.object({
  chainId: given.regex(/^[0-9]+$/, "chainId must be a number").transform(Number),
  address: given
    .regex(/^0x[0-9a-fA-F]{40}$/, "Invalid token address") // viem's isAddress, not strict: any case
    .transform((a) => a.toLowerCase() as Address),
});

/** GET /tokens/price `?chainId&address[&symbol]` (tokenMetadataQuery's checks; `symbol` upper-cased, empty as absent). */
export const tokenPriceQuery = tokenMetadataQuery.extend({
  symbol: z
    .string()
    .transform((s) => s.trim().toUpperCase() || null)
    .optional(),
});

/** GET /oracle/price `?symbol`. */
export const oraclePriceQuery = z.object({
  symbol: z.string({ error: "Symbol parameter is required" }).trim().min(1, "Symbol parameter is required"),
});

/** A lookup's query read with its schema: `chainId and address are required` before any other problem. */
function lookupQuery<S extends z.ZodObject>(schema: S, q: Query): z.output<S> {
  const parsed = schema.safeParse(q);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  throw new Invalid((issues.find((i) => i.message === REQUIRED) ?? firstIssue(issues, Object.keys(schema.shape))).message);
}

/** GET /tokens/price. */
export async function tokenPrice(deps: LookupDeps, q: Query) {
  const { chainId, address, symbol = null } = lookupQuery(tokenPriceQuery, q);
  if (!chainInfo(chainId)) throw new NotFound("Price not available for this token");
  const r = await lookupTokenPrice({ deps, chainId, token: { address, symbol, kind: "token", oracleSymbol: symbol } });
  if (r.status === "unavailable") throw new Failed("Failed to fetch token price");
  if (r.status === "none") throw new NotFound("Price not available for this token");
  return { chainId, address, symbol, priceUsd: r.price.priceUsd, source: r.price.source, timestamp: new Date(deps.now()).toISOString() };
}

/** GET /tokens/metadata. */
export async function tokenMetadata(deps: LookupDeps, q: Query) {
  const { chainId, address } = lookupQuery(tokenMetadataQuery, q);
  const r = await lookupTokenMetadata(deps, chainId, address);
  if (r.status === "not_token") throw new Invalid("Cannot read token contract");
  if (r.status === "error") throw new Failed("Failed to fetch token metadata");
  const m = r.value;
  return {
    name: m.name,
    symbol: m.symbol,
    decimals: m.decimals,
    logo: m.logo,
    hasIndexerPrice: m.price !== null,
    ...(m.price ? { priceUsd: m.price.priceUsd } : {}),
    address,
    chainId,
  };
}

/** GET /oracle/price: the default oracle's price of a symbol. */
export async function oraclePrice(deps: LookupDeps, q: Query) {
  const symbol = normalizeOracleSymbol(lookupQuery(oraclePriceQuery, q).symbol);
  // A price older than oracleMaxAgeS is no price to quote: the oracle failed to be kept fresh (500, as a failed read).
  const o = await readOraclePrice(deps, symbol)
    .then((p) => p && freshOrThrow(p, oracleMaxAgeS(deps.config)))
    .catch((e: unknown) => {
      throw e instanceof OracleUnavailableError ? new Failed("Failed to fetch price") : e;
    });
  if (!o) throw new NotFound(`Price not available for ${symbol}`);
  return { symbol, priceRaw: o.priceRaw.toString(), priceUsd: formatPrice18(o.priceRaw), decimals: 18 };
}
