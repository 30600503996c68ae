import { getAddress } from "viem";
import type pg from "pg";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid, NotFound, Unavailable } from "../../core/errors.js";
import { withTransaction } from "../../db/client.js";
import { findToken } from "../../chains/runtime.js";
import type { Caller } from "../merchants/index.js";
import { isTransportError, readContractMetadata } from "../pricing/index.js";
import {
  listVaultTokens,
  toVault,
  vaultByPublicId,
  vaultOfCaller,
  viewVault,
  VAULT_NOT_CONFIGURED,
  type VaultRow,
} from "./config-access.js";
import { parseVaultBody, tokenToEnableBody, tokenToRemoveBody, type TokenToEnable } from "./config-parse.js";
import { MAX_VAULT_TOKENS, type SupportedToken, type VaultConfiguration, type VaultToken } from "./types.js";
import { keyOwner } from "../merchants/index.js";

// The tokens a vault accepts: POST/DELETE /vault/v1/config/tokens, the `enabledTokens` of POST /config,
// and the public GET /vault/v1/business/{publicId}/tokens.

type TokenDeps = Pick<AppDeps, "db" | "chains" | "clients" | "now">;

/**
 * A token to enable, made concrete: its chain must be served by this deployment (an RPC and a factory:
 * deposit addresses and sweeps need both), and its decimals are read once (the registry's for known
 * tokens, else the contract's), since the 0.001-token minimum of a deposit is counted with them.
 */
export async function resolveVaultToken(deps: Pick<AppDeps, "chains" | "clients">, t: TokenToEnable, at = ""): Promise<VaultToken> {
  const chain = deps.chains.find((c) => c.chainId === t.chainId);
  const client = deps.clients.get(t.chainId);
  if (!chain?.factory || !client) throw new Invalid(`${at}Chain ${t.chainId} is not served by this deployment`);
  const known = findToken(chain, t.token);
  if (known) return { chainId: t.chainId, tokenAddress: t.token, tokenSymbol: t.tokenSymbol, decimals: known.decimals };
  try {
    const meta = await readContractMetadata(client, t.token);
    return { chainId: t.chainId, tokenAddress: t.token, tokenSymbol: t.tokenSymbol, decimals: meta.decimals };
  } catch (e) {
    if (isTransportError(e)) throw new Unavailable(`Could not read token ${t.token} on chain ${t.chainId}; try again later`);
    throw new Invalid(`${at}Token ${t.token} is not an ERC-20 contract on chain ${t.chainId}`);
  }
}

/** Inserts or (same chain and address) relabels tokens of a vault, in the caller's transaction. */
export async function upsertVaultTokens(client: pg.PoolClient, vaultId: string, tokens: VaultToken[], now: number): Promise<void> {
  for (const t of tokens)
    await client.query(
      `INSERT INTO vault_tokens (vault_id, chain_id, token_address, token_symbol, decimals, created_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (vault_id, chain_id, token_address) DO UPDATE SET token_symbol = EXCLUDED.token_symbol`,
      [vaultId, t.chainId, t.tokenAddress.toLowerCase(), t.tokenSymbol, t.decimals, new Date(now)],
    );
}

/** The caller's vault row, locked for the rest of the transaction (token changes of one vault are serialized). */
async function lockCallersVault(client: pg.PoolClient, apiKeyId: string) {
  const { rows } = await client.query<VaultRow>(`SELECT * FROM vault_configs WHERE api_key_id = $1 FOR UPDATE`, [apiKeyId]);
  if (!rows[0]) throw new NotFound(VAULT_NOT_CONFIGURED);
  return toVault(rows[0]);
}

/**
 * POST /vault/v1/config/tokens `{chainId, token, tokenSymbol}`. Adding a token that is already enabled is not
 * an error: its symbol becomes the one given (`added: false`). At most MAX_VAULT_TOKENS tokens.
 */
export async function addVaultToken(
  deps: TokenDeps,
  caller: Caller,
  body: unknown,
): Promise<{ added: boolean; config: VaultConfiguration }> {
  const { apiKeyId } = await keyOwner(deps, caller);
  const input = parseVaultBody(tokenToEnableBody, body, "token");
  // The vault must exist before the chain is asked anything.
  await vaultOfCaller(deps, caller);
  const token = await resolveVaultToken(deps, input);
  return withTransaction(deps.db, async (client) => {
    const vault = await lockCallersVault(client, apiKeyId);
    const before = await listVaultTokens(client, vault.id);
    const added = !before.some((t) => t.chainId === token.chainId && t.tokenAddress === token.tokenAddress);
    if (added && before.length >= MAX_VAULT_TOKENS) throw new Conflict(`A vault can enable at most ${MAX_VAULT_TOKENS} tokens`);
    await upsertVaultTokens(client, vault.id, [token], deps.now());
    await client.query(`UPDATE vault_configs SET updated_at = $2 WHERE id = $1`, [vault.id, new Date(deps.now())]);
    return { added, config: viewVault(vault, await listVaultTokens(client, vault.id)) };
  });
}

/**
 * DELETE /vault/v1/config/tokens `{chainId, token}`: the token is no longer accepted (deposits of it are then
 * recorded, not swept; see docs/vault.md). 404 `Token not enabled` when it was not.
 */
export async function removeVaultToken(deps: TokenDeps, caller: Caller, body: unknown): Promise<VaultConfiguration> {
  const { apiKeyId } = await keyOwner(deps, caller);
  const input = parseVaultBody(tokenToRemoveBody, body, "token");
  return withTransaction(deps.db, async (client) => {
    const vault = await lockCallersVault(client, apiKeyId);
    const { rowCount } = await client.query(`DELETE FROM vault_tokens WHERE vault_id = $1 AND chain_id = $2 AND token_address = $3`, [
      vault.id,
      input.chainId,
      input.token.toLowerCase(),
    ]);
    if (!rowCount) throw new NotFound("Token not enabled");
    await client.query(`UPDATE vault_configs SET updated_at = $2 WHERE id = $1`, [vault.id, new Date(deps.now())]);
    return viewVault(vault, await listVaultTokens(client, vault.id));
  });
}

const PUBLIC_ID = /^vlt_[A-Za-z0-9_-]{22}$/;
export const VAULT_NOT_FOUND = "Vault not found";

/**
 * GET /vault/v1/business/{publicId}/tokens (public): the tokens an active vault accepts. Unknown and inactive
 * vaults answer the same 404, so the route tells nothing about vaults that are switched off.
 */
export async function publicVaultTokens(deps: Pick<AppDeps, "db">, publicId: string): Promise<{ tokens: SupportedToken[] }> {
  const vault = PUBLIC_ID.test(publicId) ? await vaultByPublicId(deps.db.pool, publicId) : null;
  if (!vault || !vault.isActive) throw new NotFound(VAULT_NOT_FOUND);
  const tokens = await listVaultTokens(deps.db.pool, vault.id);
  return { tokens: tokens.map((t) => ({ chainId: t.chainId, symbol: t.tokenSymbol, address: getAddress(t.tokenAddress) })) };
}
