import {
  BaseError,
  erc20Abi,
  hexToString,
  HttpRequestError,
  TimeoutError,
  WebSocketRequestError,
  zeroAddress,
  type Address,
  type PublicClient,
} from "viem";
import type { AppDeps } from "../../core/deps.js";
import { firstLine, logger } from "../../core/log.js";
import { chainInfo } from "../../chains/registry.js";
import { priceIndexFromConfig, type IndexedPrice, type PriceIndexClient } from "./price-index.js";

/**
 * Token metadata for GET /tokens/metadata: the price index provider first, the token contract as
 * fallback (plain eth_calls: name(), symbol(), decimals(); no multicall, Anvil has none deployed).
 *
 * Outcomes:
 * - `ok`: metadata (provider fields when it knows the token; contract fields otherwise; when the
 *   provider knows the token but not its decimals on this chain, decimals come from the contract);
 * - `not_token`: no contract at the address, `decimals()` reverts or returns garbage, or the chain
 *   cannot be read (not in the registry, or no RPC configured for it): `Cannot read token contract`;
 * - `error`: the RPC failed (transport error, timeout) while the provider had nothing usable, or
 *   the provider failed and the contract cannot be read: `Failed to fetch token metadata`.
 * (lookups.ts turns these into the errors of GET /tokens/metadata.)
 */

export type TokenMetadata = {
  name: string | null;
  symbol: string | null;
  decimals: number;
  logo: string | null;
  /** Provider price, when it has one. */
  price: IndexedPrice | null;
};

export type MetadataOutcome =
  { status: "ok"; value: TokenMetadata } | { status: "not_token"; reason: string } | { status: "error"; error: string };

/** A viem error caused by the transport (HTTP failure, timeout), as opposed to the contract's answer. */
export function isTransportError(e: unknown): boolean {
  if (e instanceof BaseError)
    return Boolean(e.walk((x) => x instanceof HttpRequestError || x instanceof TimeoutError || x instanceof WebSocketRequestError));
  return false;
}

class NotTokenError extends Error {}

const bytes32Abi = (name: "name" | "symbol") =>
  [{ type: "function", name, stateMutability: "view", inputs: [], outputs: [{ name: "", type: "bytes32" }] }] as const;

/** name()/symbol(): string, or the older bytes32 form (MKR); null when absent. Transport errors propagate. */
async function readText(client: PublicClient, address: Address, fn: "name" | "symbol"): Promise<string | null> {
  try {
    const s = await client.readContract({ address, abi: erc20Abi, functionName: fn });
    return s.length ? s : null;
  } catch (e) {
    if (isTransportError(e)) throw e;
  }
  try {
    const b = await client.readContract({ address, abi: bytes32Abi(fn), functionName: fn });
    const s = hexToString(b).replace(/\0+$/, "");
    return s.length ? s : null;
  } catch (e) {
    if (isTransportError(e)) throw e;
    return null;
  }
}

/** Reads an ERC-20's name, symbol and decimals. Throws NotTokenError (not an ERC-20) or the transport error. */
export async function readContractMetadata(
  client: PublicClient,
  address: Address,
): Promise<{ name: string | null; symbol: string | null; decimals: number }> {
  const code = await client.getCode({ address });
  if (!code || code === "0x") throw new NotTokenError("no contract at address");
  const [name, symbol, decimals] = await Promise.all([
    readText(client, address, "name"),
    readText(client, address, "symbol"),
    client.readContract({ address, abi: erc20Abi, functionName: "decimals" }).catch((e: unknown) => {
      if (isTransportError(e)) throw e;
      throw new NotTokenError("decimals() failed");
    }),
  ]);
  const d = Number(decimals);
  if (!Number.isInteger(d) || d < 0 || d > 77) throw new NotTokenError("implausible decimals");
  return { name, symbol, decimals: d };
}

export async function lookupTokenMetadata(
  deps: Pick<AppDeps, "config" | "clients">,
  chainId: number,
  address: Address,
  opts: { priceIndex?: PriceIndexClient | null } = {},
): Promise<MetadataOutcome> {
  const info = chainInfo(chainId);
  if (!info) return { status: "not_token", reason: "chain not supported" };
  const index = opts.priceIndex !== undefined ? opts.priceIndex : priceIndexFromConfig(deps.config);
  const provided = index ? await index.tokenMetadata(chainId, address) : ({ status: "none", reason: "no provider" } as const);
  const fromProvider = provided.status === "ok" ? provided.value : null;
  if (fromProvider && fromProvider.decimals !== null) {
    const { decimals, ...rest } = fromProvider;
    return { status: "ok", value: { ...rest, decimals } };
  }

  // Native coin: the registry knows it, no contract to read.
  if (address.toLowerCase() === zeroAddress) {
    if (!info.native) return { status: "not_token", reason: "chain has no native coin" };
    return {
      status: "ok",
      value: {
        name: fromProvider?.name ?? info.native.symbol,
        symbol: fromProvider?.symbol ?? info.native.symbol,
        decimals: 18,
        logo: fromProvider?.logo ?? null,
        price: fromProvider?.price ?? null,
      },
    };
  }

  const client = deps.clients.get(chainId);
  if (!client) {
    if (provided.status === "error") return { status: "error", error: `price index: ${provided.error}` };
    return { status: "not_token", reason: "chain has no RPC configured" };
  }
  try {
    const onChain = await readContractMetadata(client, address);
    return {
      status: "ok",
      value: {
        name: fromProvider?.name ?? onChain.name,
        symbol: fromProvider?.symbol ?? onChain.symbol,
        decimals: onChain.decimals,
        logo: fromProvider?.logo ?? null,
        price: fromProvider?.price ?? null,
      },
    };
  } catch (e) {
    if (e instanceof NotTokenError) return { status: "not_token", reason: e.message };
    logger("token-metadata").warn({ chainId, address, error: firstLine(e) }, "reading token metadata failed");
    return { status: "error", error: (e as Error).message.split("\n")[0] ?? "rpc error" };
  }
}
