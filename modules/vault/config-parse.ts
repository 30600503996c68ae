import { getAddress, isAddress, zeroAddress, type Address } from "viem";
import { Invalid } from "../../core/errors.js";
import { BUSINESS_NAME_MAX, TOKEN_SYMBOL_MAX, VAULT_ACTIVE_CHAINS, VAULT_COMING_SOON_CHAINS } from "./types.js";

// Strict parsing of the Vault configuration bodies: the spec's messages where it gives them, ours otherwise
// (docs/vault.md lists them all). Pure: no database, no chain.

/** A JSON object body; anything else (array, string, number, null) is refused. `undefined` (no body) is `{}`. */
export function objectBody(raw: unknown): Record<string, unknown> {
  if (raw === undefined) return {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Invalid("Body must be a JSON object");
  return raw as Record<string, unknown>;
}

/** Refuses fields outside `known`; `operatorOnly` fields get a message saying who may set them. */
export function onlyFields(body: Record<string, unknown>, known: readonly string[], operatorOnly: readonly string[] = [], at = "") {
  const extra = Object.keys(body).filter((k) => !known.includes(k));
  const reserved = extra.find((k) => operatorOnly.includes(k));
  if (reserved) throw new Invalid(`${at}${reserved} can only be set by the operator for a registered business`);
  if (extra.length) throw new Invalid(`${at}Unknown field${extra.length > 1 ? "s" : ""}: ${extra.join(", ")}`);
}

const missing = (v: unknown) => v === undefined || v === null || (typeof v === "string" && v.trim() === "");
// Control characters would reach webhooks, dashboards and logs as they are.
const CONTROL = /\p{Cc}/u;

/** `businessName`: a non-empty string, trimmed, at most 100 characters. */
export function parseBusinessName(v: unknown): string {
  if (missing(v)) throw new Invalid("businessName is required");
  if (typeof v !== "string") throw new Invalid("businessName must be a string");
  const name = v.trim();
  if ([...name].length > BUSINESS_NAME_MAX) throw new Invalid(`businessName must be at most ${BUSINESS_NAME_MAX} characters`);
  if (CONTROL.test(name)) throw new Invalid("businessName must not contain control characters");
  return name;
}

/**
 * An EVM address: `0x` + 40 hex characters; mixed case must be a valid EIP-55 checksum (a typo in a
 * payout address is caught, not paid to). Returns the checksummed form.
 */
function evmAddress(v: unknown): Address | null {
  if (typeof v !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(v)) return null;
  const hex = v.slice(2);
  // All lowercase or all uppercase carry no checksum (EIP-55); mixed case must be a valid one.
  if (hex !== hex.toLowerCase() && hex !== hex.toUpperCase() && !isAddress(v)) return null;
  return getAddress(v.toLowerCase());
}

/** `walletAddress`: required, an EVM address, not the zero address (funds swept there would be burnt). */
export function parseWalletAddress(v: unknown): Address {
  if (missing(v)) throw new Invalid("walletAddress is required");
  const a = evmAddress(v);
  if (!a) throw new Invalid("Invalid EVM address");
  if (a === zeroAddress) throw new Invalid("walletAddress must not be the zero address");
  return a;
}

export function parseIsActive(v: unknown): boolean {
  if (typeof v !== "boolean") throw new Invalid("isActive must be a boolean");
  return v;
}

/** Largest chain id stored (integer columns); larger ones are refused as malformed. */
export const MAX_CHAIN_ID = 2_147_483_647;

/** `chainId`: a JSON number (a positive integer up to MAX_CHAIN_ID). */
export function parseChainId(v: unknown, at = ""): number {
  if (v === undefined || v === null) throw new Invalid(`${at}chainId is required`);
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0 || v > MAX_CHAIN_ID)
    throw new Invalid(`${at}chainId must be a positive integer number`);
  return v;
}

/** Where the Vault runs: 11155111 and 777177; 777178, 1, 137 and 56 are announced; anything else is not a vault chain. */
export function checkVaultChain(chainId: number, at = ""): void {
  if (VAULT_ACTIVE_CHAINS.includes(chainId)) return;
  if (VAULT_COMING_SOON_CHAINS.includes(chainId)) throw new Invalid(`${at}Vault is coming soon on chain ${chainId}`);
  throw new Invalid(`${at}Unsupported chain`);
}

/** `token`: an ERC-20 contract address (the native coin is not a vault token: deposits are token transfers). */
export function parseTokenAddress(v: unknown, at = ""): Address {
  if (missing(v)) throw new Invalid(`${at}token is required`);
  const a = evmAddress(v);
  if (!a) throw new Invalid(`${at}Invalid token address`);
  if (a === zeroAddress) throw new Invalid(`${at}The native coin cannot be enabled in a vault; enable an ERC-20 token`);
  return a;
}

/** `tokenSymbol`: a non-empty string, trimmed, at most 20 characters. */
export function parseTokenSymbol(v: unknown, at = ""): string {
  if (missing(v)) throw new Invalid(`${at}tokenSymbol is required`);
  if (typeof v !== "string") throw new Invalid(`${at}tokenSymbol must be a string`);
  const s = v.trim();
  if ([...s].length > TOKEN_SYMBOL_MAX) throw new Invalid(`${at}tokenSymbol must be at most ${TOKEN_SYMBOL_MAX} characters`);
  if (CONTROL.test(s)) throw new Invalid(`${at}tokenSymbol must not contain control characters`);
  return s;
}

export type TokenToEnable = { chainId: number; token: Address; tokenSymbol: string };

/** `{chainId, token, tokenSymbol}` (POST /config/tokens, an item of `enabledTokens`), checked in that order. */
export function parseTokenToEnable(raw: unknown, at = ""): TokenToEnable {
  let body: Record<string, unknown>;
  if (!at) body = objectBody(raw);
  else if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Invalid(`${at}must be an object`);
  else body = raw as Record<string, unknown>;
  onlyFields(body, ["chainId", "token", "tokenSymbol"], [], at);
  const chainId = parseChainId(body.chainId, at);
  checkVaultChain(chainId, at);
  return { chainId, token: parseTokenAddress(body.token, at), tokenSymbol: parseTokenSymbol(body.tokenSymbol, at) };
}

/** `{chainId, token}` (DELETE /config/tokens). The chain's status does not matter: only enabled tokens can be removed. */
export function parseTokenToRemove(raw: unknown): { chainId: number; token: Address } {
  const body = objectBody(raw);
  onlyFields(body, ["chainId", "token"]);
  return { chainId: parseChainId(body.chainId), token: parseTokenAddress(body.token) };
}
