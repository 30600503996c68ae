import type pg from "pg";
import type { Config } from "../../core/config.js";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { withTransaction } from "../../db/client.js";
import { boxOf, openField } from "../../core/sealed-fields.js";
import { generateApiKey, hashApiKey } from "./api-keys.js";

// A merchant's own management of its API keys (the dashboard's API keys screen): list, create with a name,
// revoke, and roll (a new key with the same name; the old one keeps working for an overlap period). Every
// operation is scoped to the merchant: another merchant's key id is NotFound, as is an unknown one.

/** The server key opens a legacy webhook's stored API key (to tell which key it signs with). */
/** What key administration reads: the database, the clock, and the secrets that open a legacy webhook key. */
export type KeyAdminDeps = Pick<AppDeps, "db" | "now"> & { config: Pick<Config, "SECRET_KEY" | "SECRET_KEY_PREVIOUS"> };
type Deps = KeyAdminDeps;
type Queryable = Pick<pg.PoolClient, "query">;

export const KEY_NOT_FOUND = "API key not found";
export const NAME_MAX = 60;

/** Roll overlap choices: how long the old key keeps working next to the new one. */
export const ROLL_OVERLAPS = { none: 0, "1h": 3_600_000, "24h": 86_400_000, "7d": 604_800_000 } as const;
export type RollOverlap = keyof typeof ROLL_OVERLAPS;

/** `active`; `expiring` (rolled, still in its overlap period); `expired` (overlap over); `revoked`. */
export type ApiKeyStatus = "active" | "expiring" | "expired" | "revoked";

export type ApiKeyView = {
  id: string;
  name: string;
  prefix: string;
  status: ApiKeyStatus;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  expiresAt: number | null;
  /** The vault bound to this key (reached through it by the Vault API), if any. */
  vault: { publicId: string; businessName: string } | null;
  /** The merchant's legacy payment webhook signs with this key (webhook_configs.legacy_api_key). */
  signsLegacyWebhook: boolean;
};

type KeyRow = {
  id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  expires_at: Date | null;
  vault_public_id: string | null;
  vault_name: string | null;
};

const SELECT_KEYS = `SELECT k.id, k.name, k.prefix, k.key_hash, k.created_at, k.last_used_at, k.revoked_at, k.expires_at,
         v.public_id AS vault_public_id, v.business_name AS vault_name
    FROM api_keys k LEFT JOIN vault_configs v ON v.api_key_id = k.id`;

const ms = (d: Date | null) => (d ? d.getTime() : null);

function statusOf(r: Pick<KeyRow, "revoked_at" | "expires_at">, now: number): ApiKeyStatus {
  if (r.revoked_at) return "revoked";
  if (r.expires_at) return r.expires_at.getTime() > now ? "expiring" : "expired";
  return "active";
}

function view(r: KeyRow, now: number, legacyHash: string | null): ApiKeyView {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    status: statusOf(r, now),
    createdAt: r.created_at.getTime(),
    lastUsedAt: ms(r.last_used_at),
    revokedAt: ms(r.revoked_at),
    expiresAt: ms(r.expires_at),
    vault: r.vault_public_id ? { publicId: r.vault_public_id, businessName: r.vault_name! } : null,
    signsLegacyWebhook: legacyHash !== null && legacyHash === r.key_hash,
  };
}

/** SHA-256 of the API key a legacy webhook of the merchant signs with (the stored key is sealed), or null. */
async function legacyWebhookKeyHash(deps: Deps, db: Queryable, merchantId: string): Promise<string | null> {
  const { rows } = await db.query<{ legacy_api_key: string | null; secret: string | null }>(
    `SELECT legacy_api_key, secret FROM webhook_configs WHERE merchant_id = $1`,
    [merchantId],
  );
  const stored = rows[0];
  if (!stored?.legacy_api_key || stored.secret) return null;
  try {
    const key = openField(boxOf(deps.config), "webhook_configs.legacy_api_key", merchantId, stored.legacy_api_key);
    return key ? hashApiKey(key) : null;
  } catch {
    return null; // sealed under a key this server no longer has: nothing to match
  }
}

/** A name for a key: trimmed, 1-60 characters, no control characters. Throws Invalid. */
export function parseKeyName(raw: unknown): string {
  const name = typeof raw === "string" ? raw.trim() : "";
  if (!name) throw new Invalid("Name is required");
  if (name.length > NAME_MAX) throw new Invalid(`Name must be at most ${NAME_MAX} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new Invalid("Name must not contain control characters");
  return name;
}

/**
 * The merchant's API keys, newest first, with the vault bound to each and the one a legacy webhook signs with.
 *
 * @example
 * const keys = await listApiKeys(deps, merchant.id); // [{ name: "default", prefix: "cp_live_AbCd", status: "active", … }]
 */
export async function listApiKeys(deps: Deps, merchantId: string): Promise<ApiKeyView[]> {
  if (!isUuid(merchantId)) throw new NotFound("Merchant not found");
  const { rows } = await deps.db.pool.query<KeyRow>(`${SELECT_KEYS} WHERE k.merchant_id = $1 ORDER BY k.created_at DESC, k.id DESC`, [
    merchantId,
  ]);
  const legacy = await legacyWebhookKeyHash(deps, deps.db.pool, merchantId);
  const now = deps.now();
  return rows.map((r) => view(r, now, legacy));
}

async function insertKey(client: Queryable, merchantId: string, name: string, now: number): Promise<{ key: string; row: KeyRow }> {
  const { key, prefix, hash } = generateApiKey();
  const { rows } = await client.query<KeyRow>(
    `INSERT INTO api_keys (merchant_id, name, prefix, key_hash, created_at) VALUES ($1, $2, $3, $4, $5)
     RETURNING id, name, prefix, key_hash, created_at, last_used_at, revoked_at, expires_at, NULL AS vault_public_id, NULL AS vault_name`,
    [merchantId, name, prefix, hash, new Date(now)],
  );
  return { key, row: rows[0]! };
}

/** The merchant's key `keyId`, locked for the transaction; NotFound for an unknown id or another merchant's key. */
async function lockKey(client: Queryable, merchantId: string, keyId: string): Promise<KeyRow> {
  if (!isUuid(keyId) || !isUuid(merchantId)) throw new NotFound(KEY_NOT_FOUND);
  const { rows } = await client.query<KeyRow>(`${SELECT_KEYS} WHERE k.id = $1 AND k.merchant_id = $2 FOR UPDATE OF k`, [keyId, merchantId]);
  if (!rows[0]) throw new NotFound(KEY_NOT_FOUND);
  return rows[0];
}

/**
 * Creates a key named `name` for the merchant; the returned `key` is shown once and never stored. Throws Invalid.
 *
 * @example
 * const { key, apiKey } = await createNamedApiKey(deps, merchant.id, "shop backend"); // key: "cp_live_…"
 */
export async function createNamedApiKey(deps: Deps, merchantId: string, name: unknown): Promise<{ key: string; apiKey: ApiKeyView }> {
  const parsed = parseKeyName(name);
  const { key, row } = await insertKey(deps.db.pool, merchantId, parsed, deps.now());
  return { key, apiKey: view(row, deps.now(), null) };
}

/**
 * Revokes the merchant's key at once (also a rolled key still in its overlap). Its vault, if any, keeps working
 * but is unreachable by the Vault API until the operator rebinds it. Throws NotFound, or Conflict when already revoked.
 *
 * @example
 * await revokeApiKey(deps, merchant.id, keyId);
 */
export async function revokeApiKey(deps: Deps, merchantId: string, keyId: string): Promise<ApiKeyView> {
  return withTransaction(deps.db, async (client) => {
    const old = await lockKey(client, merchantId, keyId);
    if (old.revoked_at) throw new Conflict("This API key is already revoked");
    const at = new Date(deps.now());
    await client.query(`UPDATE api_keys SET revoked_at = $2 WHERE id = $1`, [keyId, at]);
    const legacy = await legacyWebhookKeyHash(deps, client, merchantId);
    return view({ ...old, revoked_at: at }, deps.now(), legacy);
  });
}

export type RollResult = {
  /** The new key, shown once. */
  key: string;
  apiKey: ApiKeyView;
  /** The old key as it is now: revoked (overlap `none`) or expiring at the end of the overlap. */
  previous: ApiKeyView;
  /** The vault that moved from the old key to the new one, if any. */
  movedVault: { publicId: string; businessName: string } | null;
};

/**
 * Moves the vault bound to one key of the merchant to another, in the caller's transaction; returns it (null: none).
 * The vault module does it (flows/roll-api-key.ts hands it in): a key's vault is the vault's, not the key's.
 */
export type MoveVault = (
  client: pg.PoolClient,
  move: { merchantId: string; fromKeyId: string; toKeyId: string; at: Date },
) => Promise<{ publicId: string; businessName: string } | null>;

/**
 * Rolls a key: a new key with the same name, the old one revoked now (`none`) or expiring after the overlap
 * (`1h`, `24h`, `7d`), and the vault bound to the old key moved to the new one, all in one transaction. A
 * legacy webhook signing with the old key is left as it is. Only an active key rolls (Conflict otherwise).
 *
 * @example
 * const { key, previous } = await rollApiKey(deps, merchant.id, keyId, "24h"); // previous.status: "expiring"
 */
export async function rollApiKey(
  deps: Deps,
  merchantId: string,
  keyId: string,
  overlap: unknown,
  moveVault: MoveVault,
): Promise<RollResult> {
  if (typeof overlap !== "string" || !Object.hasOwn(ROLL_OVERLAPS, overlap))
    throw new Invalid(`overlap must be one of ${Object.keys(ROLL_OVERLAPS).join(", ")}`);
  const overlapMs = ROLL_OVERLAPS[overlap as RollOverlap];
  return withTransaction(deps.db, async (client) => {
    const old = await lockKey(client, merchantId, keyId);
    const now = deps.now();
    if (statusOf(old, now) !== "active")
      throw new Conflict(old.revoked_at ? "A revoked API key cannot be rolled" : "This API key was already rolled");
    const { key, row } = await insertKey(client, merchantId, old.name, now);
    const at = new Date(now);
    const previousRow =
      overlapMs === 0
        ? { ...old, revoked_at: at }
        : { ...old, expires_at: new Date(now + overlapMs), vault_public_id: null, vault_name: null };
    await client.query(`UPDATE api_keys SET revoked_at = $2, expires_at = $3 WHERE id = $1`, [
      keyId,
      previousRow.revoked_at,
      previousRow.expires_at,
    ]);
    // One vault per key (unique api_key_id): the new key has none, so the old key's vault moves to it.
    const vault = await moveVault(client, { merchantId, fromKeyId: keyId, toKeyId: row.id, at });
    const legacy = await legacyWebhookKeyHash(deps, client, merchantId);
    return {
      key,
      apiKey: view({ ...row, vault_public_id: vault?.publicId ?? null, vault_name: vault?.businessName ?? null }, now, legacy),
      previous: view({ ...previousRow, vault_public_id: null, vault_name: null }, now, legacy),
      movedVault: vault,
    };
  });
}
