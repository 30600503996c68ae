import { Hono } from "hono";
import type { Address } from "viem";
import { chainInfo } from "../../chains/registry.js";
import { formatPrice18 } from "../../core/money.js";
import { normalizeOracleSymbol, OracleUnavailableError, readOraclePrice } from "../../modules/pricing/oracle.js";
import { priceIndexFromConfig } from "../../modules/pricing/price-index.js";
import { lookupTokenMetadata } from "../../modules/pricing/token-metadata.js";
import type { AppEnv } from "../context.js";

/**
 * Public price and token lookups (no authentication): GET /tokens/price, GET /tokens/metadata,
 * GET /oracle/price. Errors are `{error}` with the spec's statuses and messages, checked in the
 * spec's order.
 *
 * Choices where the spec is silent:
 * - An empty query parameter counts as missing. `chainId` must be decimal digits only
 *   (`1.5`, `-1`, `0x89` -> `chainId must be a number`); surrounding whitespace is ignored.
 * - A chainId outside the registry: /tokens/price answers 404 `Price not available for this token`
 *   (no source covers it); /tokens/metadata answers 400 `Cannot read token contract` (we serve no
 *   such network). `Invalid network selected` belongs to POST /payments and is not used here.
 * - A registry chain without RPC in this deployment: /tokens/price still asks the provider (if the
 *   chain is covered) and the default oracle (oracles are keyed by symbol); /tokens/metadata uses
 *   the provider, else 400 `Cannot read token contract`.
 * - /tokens/price consults the oracle only when `symbol` is given (spec). 404 when every consulted
 *   source answered "no price"; 500 `Failed to fetch token price` when a consulted source failed
 *   (provider down, RPC error) and no other source had a price. A provider outage therefore still
 *   answers 200 from the oracle when the oracle has the symbol.
 * - `timestamp` is when this answer was produced (the service clock), not the source's update time.
 * - `symbol` in /tokens/price echoes the query symbol upper-cased (USDT0 stays USDT0; the oracle is
 *   asked for USDT); /oracle/price answers with the normalized symbol (USDT0 -> USDT).
 * - The zero address is the native coin: priced by the provider's native coin id, described from
 *   the registry when the provider does not know it.
 */
export const tokens = new Hono<AppEnv>();

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const CHAIN_ID_RE = /^[0-9]+$/;

type Checked = { ok: true; chainId: number; address: Address } | { ok: false; error: string };

function checkChainAndAddress(chainIdRaw: string | undefined, addressRaw: string | undefined): Checked {
  const chainIdStr = chainIdRaw?.trim();
  const address = addressRaw?.trim();
  if (!chainIdStr || !address) return { ok: false, error: "chainId and address are required" };
  if (!CHAIN_ID_RE.test(chainIdStr)) return { ok: false, error: "chainId must be a number" };
  if (!ADDRESS_RE.test(address)) return { ok: false, error: "Invalid token address" };
  return { ok: true, chainId: Number(chainIdStr), address: address.toLowerCase() as Address };
}

tokens.get("/tokens/price", async (c) => {
  const deps = c.var.deps;
  const v = checkChainAndAddress(c.req.query("chainId"), c.req.query("address"));
  if (!v.ok) return c.json({ error: v.error }, 400);
  const { chainId, address } = v;
  const symbolRaw = c.req.query("symbol")?.trim();
  const symbol = symbolRaw ? symbolRaw.toUpperCase() : null;
  const notFound = () => c.json({ error: "Price not available for this token" }, 404);
  if (!chainInfo(chainId)) return notFound();
  try {
    let failed = false;
    const index = priceIndexFromConfig(deps.config);
    if (index) {
      const r = await index.tokenPrice(chainId, address);
      if (r.status === "ok")
        return c.json({ chainId, address, symbol, priceUsd: r.value.priceUsd, source: "indexer" as const, timestamp: new Date(deps.now()).toISOString() });
      if (r.status === "error") failed = true;
    }
    if (symbol) {
      try {
        const o = await readOraclePrice(deps, symbol, { chainId });
        if (o)
          return c.json({ chainId, address, symbol, priceUsd: formatPrice18(o.priceRaw), source: "trusted_oracle" as const, timestamp: new Date(deps.now()).toISOString() });
      } catch (e) {
        if (!(e instanceof OracleUnavailableError)) throw e;
        failed = true;
      }
    }
    if (failed) return c.json({ error: "Failed to fetch token price" }, 500);
    return notFound();
  } catch (e) {
    console.error("[tokens] price lookup failed", e);
    return c.json({ error: "Failed to fetch token price" }, 500);
  }
});

tokens.get("/tokens/metadata", async (c) => {
  const deps = c.var.deps;
  const v = checkChainAndAddress(c.req.query("chainId"), c.req.query("address"));
  if (!v.ok) return c.json({ error: v.error }, 400);
  const { chainId, address } = v;
  try {
    const r = await lookupTokenMetadata(deps, chainId, address);
    if (r.status === "not_token") return c.json({ error: "Cannot read token contract" }, 400);
    if (r.status === "error") return c.json({ error: "Failed to fetch token metadata" }, 500);
    const m = r.value;
    return c.json({
      name: m.name,
      symbol: m.symbol,
      decimals: m.decimals,
      logo: m.logo,
      hasIndexerPrice: m.price !== null,
      ...(m.price ? { priceUsd: m.price.priceUsd } : {}),
      address,
      chainId,
    });
  } catch (e) {
    console.error("[tokens] metadata lookup failed", e);
    return c.json({ error: "Failed to fetch token metadata" }, 500);
  }
});

tokens.get("/oracle/price", async (c) => {
  const deps = c.var.deps;
  const raw = c.req.query("symbol")?.trim();
  if (!raw) return c.json({ error: "Symbol parameter is required" }, 400);
  const symbol = normalizeOracleSymbol(raw);
  try {
    const o = await readOraclePrice(deps, symbol);
    if (!o) return c.json({ error: `Price not available for ${symbol}` }, 404);
    return c.json({ symbol, priceRaw: o.priceRaw.toString(), priceUsd: formatPrice18(o.priceRaw), decimals: 18 });
  } catch (e) {
    if (!(e instanceof OracleUnavailableError)) console.error("[tokens] oracle lookup failed", e);
    return c.json({ error: "Failed to fetch price" }, 500);
  }
});
