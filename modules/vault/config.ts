import { randomBytes } from "node:crypto";
import type pg from "pg";
import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, NotFound } from "../../core/errors.js";
import { objectError } from "../../core/zod-issues.js";
import { withTransaction } from "../../db/client.js";
import type { Caller } from "../merchants/index.js";
import {
  listVaultTokens,
  toVault,
  vaultConfiguration,
  vaultOfCaller,
  viewVault,
  VAULT_NOT_CONFIGURED,
  type VaultRow,
} from "./config-access.js";
import {
  businessNameField,
  DUPLICATE,
  isActiveField,
  NOT_AN_OBJECT,
  NOTHING,
  parseVaultBody,
  tokenToEnableItem,
  walletAddressField,
  type TokenToEnable,
} from "./config-parse.js";
import { resolveVaultToken, upsertVaultTokens } from "./tokens.js";
import { MAX_VAULT_TOKENS, type VaultConfiguration, type VaultToken } from "./types.js";
import { keyOwner } from "../merchants/index.js";

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

/** Items that name a token an earlier item named (same chain and address), each an issue of its own place. */
function duplicates(items: TokenToEnable[], ctx: z.RefinementCtx<TokenToEnable[]>) {
  if (!Array.isArray(items)) return; // not a list: that is the problem reported
  const seen = new Set<string>();
  items.forEach((t: Partial<TokenToEnable> | null, i) => {
    // An item with problems of its own is here as it came: those problems are reported before its duplicate.
    if (typeof t?.chainId !== "number" || typeof t.token !== "string") return;
    const key = `${t.chainId}:${t.token.toLowerCase()}`;
    if (seen.has(key)) ctx.addIssue({ code: "custom", message: "duplicate token", input: t, path: [i, DUPLICATE] });
    seen.add(key);
  });
}

/**
 * POST /vault/v1/config `{businessName, walletAddress, enabledTokens?}` (`feeBps` and `feeRecipient` are the
 * operator's). Reported in this order: name, wallet, unknown fields, then `enabledTokens` item by item.
 */
export const createVaultBody = z.strictObject(
  {
    businessName: businessNameField,
    walletAddress: walletAddressField,
    enabledTokens: z
      .array(tokenToEnableItem, { error: "enabledTokens must be an array" })
      .max(MAX_VAULT_TOKENS, `enabledTokens must have at most ${MAX_VAULT_TOKENS} tokens`)
      // Run even when an item failed: a duplicate before that item is reported first.
      .superRefine(duplicates, { when: () => true })
      .nullable()
      .optional(),
  },
  { error: objectError(NOT_AN_OBJECT, OPERATOR_FIELDS) },
);

/** PATCH /vault/v1/config `{businessName?, walletAddress?, isActive?}`: at least one, nothing else. */
export const updateVaultBody = z
  .strictObject(
    { businessName: businessNameField.optional(), walletAddress: walletAddressField.optional(), isActive: isActiveField.optional() },
    { error: objectError(NOT_AN_OBJECT, OPERATOR_FIELDS) },
  )
  .refine((b) => Object.keys(b).length > 0, {
    message: "Nothing to update: give businessName, walletAddress and/or isActive",
    path: [NOTHING],
  })
  .meta({ description: "At least one field" });

/**
 * POST /vault/v1/config: creates the vault of the caller's API key, with the default fee (25 bps) and the
 * deployment's fee recipient. 409 `Vault already configured` when the key has one.
 */
export async function createVault(deps: ConfigDeps, caller: Caller, raw: unknown): Promise<VaultConfiguration> {
  const owner = await keyOwner(deps, caller);
  const { businessName, walletAddress, enabledTokens } = parseVaultBody(createVaultBody, raw, "config");
  const wanted = enabledTokens ?? [];

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
  const body = parseVaultBody(updateVaultBody, raw, "update");
  const businessName = body.businessName ?? null;
  const walletAddress = body.walletAddress ?? null;
  const isActive = body.isActive ?? null;
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
