import { getAddress } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { cursorAtSql, decodeCursor, encodeCursor, type Cursor } from "../../core/cursor.js";
import { Invalid, NotFound } from "../../core/errors.js";
import { getVaultWebhookConfig } from "../webhooks/index.js";
import { listVaultTokens, toVault, type VaultRow } from "./config-access.js";
import { depositView, type Deposit, type DepositRow } from "./serialize-deposit.js";
import type { Vault, VaultToken } from "./types.js";

// The merchant's side of the Vault for the dashboard (read only): a merchant may have several vaults (one per
// API key); the API reaches one through its key (config-access.ts), the dashboard lists them all by merchant.
// Every reader takes the merchant id: another merchant's vault is NotFound.

export const VAULT_NOT_FOUND = "Vault not found";

/** A vault with the API key it belongs to (prefix only) and whether that key still works. */
export type MerchantVault = Vault & { apiKeyPrefix: string; apiKeyName: string; apiKeyLive: boolean };

type Row = VaultRow & { key_prefix: string; key_name: string; key_live: boolean };
const withKey = (r: Row): MerchantVault => ({
  ...toVault(r),
  apiKeyPrefix: r.key_prefix,
  apiKeyName: r.key_name,
  apiKeyLive: r.key_live,
});
const SELECT_VAULT = `SELECT v.*, k.prefix AS key_prefix, k.name AS key_name,
    (k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())) AS key_live
  FROM vault_configs v JOIN api_keys k ON k.id = v.api_key_id`;

/**
 * The merchant's vaults, oldest first.
 *
 * @example
 * const vaults = await merchantVaults(deps.db, merchant.id); // [] before POST /vault/v1/config
 */
export async function merchantVaults(db: AppDeps["db"], merchantId: string): Promise<MerchantVault[]> {
  const { rows } = await db.pool.query<Row>(`${SELECT_VAULT} WHERE v.merchant_id = $1 ORDER BY v.created_at, v.id`, [merchantId]);
  return rows.map(withKey);
}

/**
 * One vault of the merchant by its public id, with its tokens and its webhook (the secret never leaves
 * here: only whether one is set). NotFound for an unknown id or another merchant's vault.
 */
export async function merchantVault(
  deps: Pick<AppDeps, "db" | "config">,
  merchantId: string,
  publicId: string,
): Promise<{
  vault: MerchantVault;
  tokens: VaultToken[];
  webhook: { url: string; events: string[]; isActive: boolean; signed: boolean; updatedAt: number } | null;
}> {
  const { rows } = await deps.db.pool.query<Row>(`${SELECT_VAULT} WHERE v.merchant_id = $1 AND v.public_id = $2`, [merchantId, publicId]);
  if (!rows[0]) throw new NotFound(VAULT_NOT_FOUND);
  const vault = withKey(rows[0]);
  const [tokens, hook] = await Promise.all([listVaultTokens(deps.db.pool, vault.id), getVaultWebhookConfig(deps, vault.id)]);
  const webhook = hook
    ? { url: hook.url, events: hook.events, isActive: hook.is_active, signed: hook.secret !== null, updatedAt: hook.updated_at.getTime() }
    : null;
  return { vault, tokens, webhook };
}

export type VaultUserRow = {
  id: string;
  externalUserId: string;
  chainId: number;
  /** Checksummed. */
  depositAddress: string;
  tokenSymbol: string;
  createdAt: number;
};

export type Page<T> = { items: T[]; nextCursor: string | null };

const PAGE = 25;

function cursorOf(raw: string | undefined): Cursor | null {
  if (raw === undefined || raw === "") return null;
  const c = decodeCursor(raw);
  if (!c) throw new Invalid("Invalid page cursor");
  return c;
}

const nextOf = <R extends { id: string; cursor: string }>(rows: R[], limit: number) =>
  rows.length > limit ? encodeCursor({ at: rows[limit - 1]!.cursor, id: rows[limit - 1]!.id }) : null;

/** A vault's users (one row per user, wallet and chain), newest first; `cursor` from the previous page. */
export async function vaultUsersPage(
  db: AppDeps["db"],
  vault: Pick<Vault, "id" | "merchantId">,
  opts: { cursor?: string; limit?: number } = {},
): Promise<Page<VaultUserRow>> {
  const limit = opts.limit ?? PAGE;
  const c = cursorOf(opts.cursor);
  const { rows } = await db.pool.query<{
    id: string;
    external_user_id: string;
    chain_id: number;
    address: string;
    token_symbol: string;
    created_at: Date;
    cursor: string;
  }>(
    `SELECT id, external_user_id, chain_id, address, token_symbol, created_at, ${cursorAtSql("created_at")} AS cursor
       FROM vault_users WHERE vault_id = $1 AND merchant_id = $2
        AND ($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::uuid))
      ORDER BY created_at DESC, id DESC LIMIT $5`,
    [vault.id, vault.merchantId, c?.at ?? null, c?.id ?? null, limit + 1],
  );
  return {
    items: rows.slice(0, limit).map((r) => ({
      id: r.id,
      externalUserId: r.external_user_id,
      chainId: r.chain_id,
      depositAddress: getAddress(r.address),
      tokenSymbol: r.token_symbol,
      createdAt: r.created_at.getTime(),
    })),
    nextCursor: nextOf(rows, limit),
  };
}

/** A deposit as the API shows it, plus the token's decimals (null when unknown) to format its amounts. */
export type VaultDepositRow = Deposit & { tokenDecimals: number | null };

/** A vault's deposits (re-org-dropped ones left out, as the API does), newest first; `cursor` from the previous page. */
export async function vaultDepositsPage(
  db: AppDeps["db"],
  vault: Pick<Vault, "id" | "merchantId">,
  opts: { cursor?: string; limit?: number } = {},
): Promise<Page<VaultDepositRow>> {
  const limit = opts.limit ?? PAGE;
  const c = cursorOf(opts.cursor);
  const { rows } = await db.pool.query<DepositRow & { cursor: string }>(
    `SELECT d.*, u.external_user_id, ${cursorAtSql("d.created_at")} AS cursor
       FROM vault_deposits d JOIN vault_users u ON u.id = d.vault_user_id
      WHERE d.vault_id = $1 AND d.merchant_id = $2 AND d.status <> 'dropped'
        AND ($3::timestamptz IS NULL OR (d.created_at, d.id) < ($3::timestamptz, $4::uuid))
      ORDER BY d.created_at DESC, d.id DESC LIMIT $5`,
    [vault.id, vault.merchantId, c?.at ?? null, c?.id ?? null, limit + 1],
  );
  return {
    items: rows.slice(0, limit).map((r) => ({ ...depositView(r), tokenDecimals: r.token_decimals })),
    nextCursor: nextOf(rows, limit),
  };
}
