import { getAddress } from "viem";
import type pg from "pg";
import type { AppDeps } from "../../core/deps.js";
import { NotFound } from "../../core/errors.js";
import { keyOwner, type Caller } from "../merchants/index.js";
import type { Vault, VaultConfiguration, VaultToken } from "./types.js";

// Who reaches which vault: a vault is bound to the API key it was created with (one vault per key) and
// belongs to that key's merchant. Every key-authenticated vault operation (config, tokens, webhooks, users,
// deposits) starts with vaultOfCaller; another key, even of the same merchant, sees another vault or none.

export const VAULT_NOT_CONFIGURED = "Vault not configured";

type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

export type VaultRow = {
  id: string;
  public_id: string;
  merchant_id: string;
  api_key_id: string;
  business_name: string;
  wallet_address: string;
  fee_bps: number;
  fee_recipient: string | null;
  fee_registered_at: Date | null;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
};

export const toVault = (r: VaultRow): Vault => ({
  id: r.id,
  publicId: r.public_id,
  merchantId: r.merchant_id,
  apiKeyId: r.api_key_id,
  businessName: r.business_name,
  walletAddress: r.wallet_address,
  feeBps: r.fee_bps,
  feeRecipient: r.fee_recipient,
  feeRegisteredAt: r.fee_registered_at?.getTime() ?? null,
  isActive: r.is_active,
  createdAt: r.created_at.getTime(),
  updatedAt: r.updated_at.getTime(),
});

/** The vault of the caller's API key. Unauthorized (bad key), NotFound `Vault not configured` (none yet). */
export async function vaultOfCaller(deps: Pick<AppDeps, "db">, caller: Caller): Promise<Vault> {
  const { apiKeyId } = await keyOwner(deps, caller);
  const { rows } = await deps.db.pool.query<VaultRow>(`SELECT * FROM vault_configs WHERE api_key_id = $1`, [apiKeyId]);
  if (!rows[0]) throw new NotFound(VAULT_NOT_CONFIGURED);
  return toVault(rows[0]);
}

/** A vault by its public id (any state), or null. */
export async function vaultByPublicId(db: Queryable, publicId: string): Promise<Vault | null> {
  const { rows } = await db.query<VaultRow>(`SELECT * FROM vault_configs WHERE public_id = $1`, [publicId]);
  return rows[0] ? toVault(rows[0]) : null;
}

type TokenRow = { chain_id: number; token_address: string; token_symbol: string; decimals: number };

/** The vault's enabled tokens, by chain then symbol (byte order: the same on every database). */
export async function listVaultTokens(db: Queryable, vaultId: string): Promise<VaultToken[]> {
  const { rows } = await db.query<TokenRow>(
    `SELECT chain_id, token_address, token_symbol, decimals FROM vault_tokens WHERE vault_id = $1
      ORDER BY chain_id, token_symbol COLLATE "C", token_address`,
    [vaultId],
  );
  return rows.map((r) => ({
    chainId: r.chain_id,
    tokenAddress: getAddress(r.token_address),
    tokenSymbol: r.token_symbol,
    decimals: r.decimals,
  }));
}

/** One enabled token of a vault (address any case), or null: what deposit detection asks of a transfer. */
export async function findVaultToken(db: Queryable, vaultId: string, chainId: number, tokenAddress: string): Promise<VaultToken | null> {
  const { rows } = await db.query<TokenRow>(
    `SELECT chain_id, token_address, token_symbol, decimals FROM vault_tokens WHERE vault_id = $1 AND chain_id = $2 AND token_address = $3`,
    [vaultId, chainId, tokenAddress.toLowerCase()],
  );
  const r = rows[0];
  return r ? { chainId: r.chain_id, tokenAddress: getAddress(r.token_address), tokenSymbol: r.token_symbol, decimals: r.decimals } : null;
}

/** The spec's VaultConfiguration. */
export function viewVault(vault: Vault, tokens: VaultToken[]): VaultConfiguration {
  return {
    publicId: vault.publicId,
    businessName: vault.businessName,
    walletAddress: vault.walletAddress,
    feeBps: vault.feeBps,
    isActive: vault.isActive,
    enabledTokens: tokens.map((t) => ({ chainId: t.chainId, tokenSymbol: t.tokenSymbol, tokenAddress: t.tokenAddress })),
  };
}

/** The configuration as GET shows it. */
export async function vaultConfiguration(db: Queryable, vault: Vault): Promise<VaultConfiguration> {
  return viewVault(vault, await listVaultTokens(db, vault.id));
}
