import { isAddress, type Address } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { chainInfo } from "../../chains/registry.js";
import { Failed, Invalid, NotFound } from "../../core/errors.js";
import { formatPrice18 } from "../../core/money.js";
import { normalizeOracleSymbol, OracleUnavailableError, readOraclePrice } from "./oracle.js";
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

function chainAndAddress(q: Query): { chainId: number; address: Address } {
  const chainId = q.chainId?.trim();
  const address = q.address?.trim();
  if (!chainId || !address) throw new Invalid("chainId and address are required");
  if (!/^[0-9]+$/.test(chainId)) throw new Invalid("chainId must be a number");
  if (!isAddress(address, { strict: false })) throw new Invalid("Invalid token address");
  return { chainId: Number(chainId), address: address.toLowerCase() as Address };
}

/** GET /tokens/price. */
export async function tokenPrice(deps: LookupDeps, q: Query) {
  const { chainId, address } = chainAndAddress(q);
  const symbolRaw = q.symbol?.trim();
  const symbol = symbolRaw ? symbolRaw.toUpperCase() : null;
  if (!chainInfo(chainId)) throw new NotFound("Price not available for this token");
  const r = await lookupTokenPrice({ deps, chainId, token: { address, symbol, kind: "token", oracleSymbol: symbol } });
  if (r.status === "unavailable") throw new Failed("Failed to fetch token price");
  if (r.status === "none") throw new NotFound("Price not available for this token");
  return { chainId, address, symbol, priceUsd: r.price.priceUsd, source: r.price.source, timestamp: new Date(deps.now()).toISOString() };
}

/** GET /tokens/metadata. */
export async function tokenMetadata(deps: LookupDeps, q: Query) {
  const { chainId, address } = chainAndAddress(q);
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
  const raw = q.symbol?.trim();
  if (!raw) throw new Invalid("Symbol parameter is required");
  const symbol = normalizeOracleSymbol(raw);
  const o = await readOraclePrice(deps, symbol).catch((e: unknown) => {
    throw e instanceof OracleUnavailableError ? new Failed("Failed to fetch price") : e;
  });
  if (!o) throw new NotFound(`Price not available for ${symbol}`);
  return { symbol, priceRaw: o.priceRaw.toString(), priceUsd: formatPrice18(o.priceRaw), decimals: 18 };
}
