import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { withTransaction } from "../../db/client.js";
import type { Caller } from "../merchants/authenticate.js";
import {
  keyOwner,
  listVaultTokens,
  toVault,
  vaultConfiguration,
  vaultOfCaller,
  viewVault,
  VAULT_NOT_CONFIGURED,
  type VaultRow,
} from "./config-access.js";
import {
  objectBody,
  onlyFields,
  parseBusinessName,
  parseIsActive,
  parseTokenToEnable,
  parseWalletAddress,
  type TokenToEnable,
} from "./config-parse.js";
import { resolveVaultToken, upsertVaultTokens } from "./tokens.js";
import { MAX_VAULT_TOKENS, type VaultConfiguration, type VaultToken } from "./types.js";

// The vault of an API key: POST (once per key), GET and PATCH /vault/v1/config, for REST, GraphQL and the CLI.
// Checks run in the spec's order: the key (401), the body (400), then the vault's state (409/404).

type ConfigDeps = Pick<AppDeps, "db" | "chains" | "clients" | "now">;

export const VAULT_ALREADY_CONFIGURED = "Vault already configured";
export const WALLET_OF_ANOTHER_BUSINESS = "walletAddress is used by another business";

/**
 * A wallet is used by the vaults of one merchant only (`vault_wallets`, the first merchant to configure it): else
 * another merchant could configure a vault with a business's public wallet, hand out its users' addresses first
 * (they derive from the user id and the wallet) and learn its user ids. 409 for everyone else. In the caller's
 * transaction; the primary key settles two merchants racing for one wallet.
 */
async function claimWallet(client: pg.PoolClient, wallet: string, merchantId: string, now: Date): Promise<void> {
  await client.query(`INSERT INTO vault_wallets (wallet_address, merchant_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
    wallet.toLowerCase(),
    merchantId,
    now,
  ]);
  const { rows } = await client.query<{ merchant_id: string }>(`SELECT merchant_id FROM vault_wallets WHERE wallet_address = $1`, [
    wallet.toLowerCase(),
  ]);
  if (rows[0]?.merchant_id !== merchantId) throw new Conflict(WALLET_OF_ANOTHER_BUSINESS);
}
const OPERATOR_FIELDS = ["feeBps", "feeRecipient"];

/** `vlt_` + 128 random bits, base64url: URL-safe, not guessable, unrelated to the row id. */
export const newPublicId = () => `vlt_${randomBytes(16).toString("base64url")}`;

function parseEnabledTokens(v: unknown): TokenToEnable[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new Invalid("enabledTokens must be an array");
  if (v.length > MAX_VAULT_TOKENS) throw new Invalid(`enabledTokens must have at most ${MAX_VAULT_TOKENS} tokens`);
  const out: TokenToEnable[] = [];
  v.forEach((item, i) => {
    const t = parseTokenToEnable(item, `enabledTokens[${i}]: `);
    if (out.some((o) => o.chainId === t.chainId && o.token === t.token)) throw new Invalid(`enabledTokens[${i}]: duplicate token`);
    out.push(t);
  });
  return out;
}

/**
 * POST /vault/v1/config: creates the vault of the caller's API key, with the default fee (25 bps) and the
 * deployment's fee recipient. 409 `Vault already configured` when the key has one.
 */
export async function createVault(deps: ConfigDeps, caller: Caller, raw: unknown): Promise<VaultConfiguration> {
  const owner = await keyOwner(deps, caller);
  const body = objectBody(raw);
  const businessName = parseBusinessName(body.businessName);
  const walletAddress = parseWalletAddress(body.walletAddress);
  onlyFields(body, ["businessName", "walletAddress", "enabledTokens"], OPERATOR_FIELDS);
  const wanted = parseEnabledTokens(body.enabledTokens);

  const exists = await deps.db.pool.query(`SELECT 1 FROM vault_configs WHERE api_key_id = $1`, [owner.apiKeyId]);
  if (exists.rowCount) throw new Conflict(VAULT_ALREADY_CONFIGURED);
  const tokens: VaultToken[] = [];
  for (const [i, t] of wanted.entries()) tokens.push(await resolveVaultToken(deps, t, `enabledTokens[${i}]: `));

  const at = new Date(deps.now());
  return withTransaction(deps.db, async (client) => {
    const { rows } = await client.query<VaultRow>(
      `INSERT INTO vault_configs (public_id, merchant_id, api_key_id, business_name, wallet_address, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT (api_key_id) DO NOTHING RETURNING *`,
      [newPublicId(), owner.merchantId, owner.apiKeyId, businessName, walletAddress, at],
    );
    if (!rows[0]) throw new Conflict(VAULT_ALREADY_CONFIGURED); // a concurrent POST with the same key won
    await claimWallet(client, walletAddress, owner.merchantId, at);
    const vault = toVault(rows[0]);
    await upsertVaultTokens(client, vault.id, tokens, deps.now());
    return viewVault(vault, await listVaultTokens(client, vault.id));
  });
}

/** GET /vault/v1/config: 404 `Vault not configured` when the key has none. */
export async function getVault(deps: Pick<AppDeps, "db">, caller: Caller): Promise<VaultConfiguration> {
  const vault = await vaultOfCaller(deps, caller);
  return vaultConfiguration(deps.db.pool, vault);
}

/**
 * PATCH /vault/v1/config `{businessName?, walletAddress?, isActive?}`, at least one, nothing else (`feeBps` and
 * `feeRecipient` are the operator's). A new wallet applies to addresses handed out from then on: an address
 * already given commits to the wallet of its time, and what arrives there is still swept to that wallet.
 */
export async function updateVault(deps: Pick<AppDeps, "db" | "now">, caller: Caller, raw: unknown): Promise<VaultConfiguration> {
  const owner = await keyOwner(deps, caller);
  const body = objectBody(raw);
  onlyFields(body, ["businessName", "walletAddress", "isActive"], OPERATOR_FIELDS);
  if (!Object.keys(body).length) throw new Invalid("Nothing to update: give businessName, walletAddress and/or isActive");
  const businessName = body.businessName === undefined ? null : parseBusinessName(body.businessName);
  const walletAddress = body.walletAddress === undefined ? null : parseWalletAddress(body.walletAddress);
  const isActive = body.isActive === undefined ? null : parseIsActive(body.isActive);
  const at = new Date(deps.now());
  return withTransaction(deps.db, async (client) => {
    const { rows } = await client.query<VaultRow>(
      `UPDATE vault_configs SET business_name = COALESCE($2, business_name), wallet_address = COALESCE($3, wallet_address),
              is_active = COALESCE($4, is_active), updated_at = $5
        WHERE api_key_id = $1 RETURNING *`,
      [owner.apiKeyId, businessName, walletAddress, isActive, at],
    );
    if (!rows[0]) throw new NotFound(VAULT_NOT_CONFIGURED);
    if (walletAddress) await claimWallet(client, walletAddress, owner.merchantId, at);
    return vaultConfiguration(client, toVault(rows[0]));
  });
}
