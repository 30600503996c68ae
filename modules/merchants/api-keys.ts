import { createHash, randomBytes } from "node:crypto";

// Bearer secrets (API keys, dashboard session tokens): 32 random bytes, of which only the SHA-256 is stored.

export const newToken = () => randomBytes(32).toString("base64url");
export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** API keys are `cp_live_` + a new token. */
export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = `cp_live_${newToken()}`;
  return { key, prefix: key.slice(0, 12), hash: hashApiKey(key) };
}

export const hashApiKey = hashToken;

/**
 * SQL that finds a live API key by its hash (`$1`) and its merchant, as CTE `key` (api_keys `id` as
 * `key_id`, plus the merchant's columns), and records the key's last use at most once a minute: a
 * busy key is read, not written (and row-locked), on every request. One round trip.
 *
 * @example
 * const { rows } = await pool.query(`${liveKeySql("m.id, m.name")} SELECT * FROM key`, [hashApiKey(key)]);
 */
export const liveKeySql = (merchantColumns: string) => `WITH ${liveKeyCtes(merchantColumns, "$1")}`;

/** liveKeySql's CTEs (`key`, `touched`) with the key hash in parameter `hashParam`, to add to another statement. */
export const liveKeyCtes = (merchantColumns: string, hashParam: string) => `
  key AS (
    SELECT k.id AS key_id, k.last_used_at, ${merchantColumns}
      FROM api_keys k JOIN merchants m ON m.id = k.merchant_id
     WHERE k.key_hash = ${hashParam} AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
  ), touched AS (
    UPDATE api_keys SET last_used_at = now()
     WHERE id IN (SELECT key_id FROM key WHERE last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
  )`;

/**
 * liveKeyCtes for many requests in one statement: CTE `keys` has one row per request (`ord`) of CTE `input` whose
 * `hashColumn` is a live key's hash (`key_id` and the merchant's columns), and `keys_touched` records the keys' use as
 * liveKeyCtes does (each key once, however many requests used it; locked in id order).
 */
export const liveKeysCtes = (merchantColumns: string, input: string, hashColumn: string) => `
  keys AS (
    SELECT r.ord, k.id AS key_id, k.last_used_at, ${merchantColumns}
      FROM ${input} r JOIN api_keys k ON k.key_hash = r.${hashColumn} JOIN merchants m ON m.id = k.merchant_id
     WHERE k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
  ), keys_touched AS (
    -- Locked in id order first: two statements touching the same keys cannot deadlock on them.
    UPDATE api_keys SET last_used_at = now()
     WHERE id IN (
       SELECT t.id FROM api_keys t
        WHERE t.id IN (SELECT key_id FROM keys WHERE last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
        ORDER BY t.id FOR UPDATE)
  )`;
