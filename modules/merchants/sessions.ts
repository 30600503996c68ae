import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../../db/client.js";

/** Dashboard session cookie: an opaque random token; only its SHA-256 is stored. */
export const SESSION_COOKIE = "cp_session";
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const hash = (t: string) => createHash("sha256").update(t).digest("hex");

export async function createSession(db: Db, merchantId: string, now: number): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(now + SESSION_TTL_MS);
  await db.pool.query(`INSERT INTO sessions (merchant_id, token_hash, expires_at) VALUES ($1, $2, $3)`, [merchantId, hash(token), expiresAt]);
  return { token, expiresAt };
}

export async function merchantIdForSession(db: Db, token: string | undefined, now: number): Promise<string | null> {
  if (!token) return null;
  const { rows } = await db.pool.query(`SELECT merchant_id FROM sessions WHERE token_hash = $1 AND expires_at > $2`, [hash(token), new Date(now)]);
  return rows[0]?.merchant_id ?? null;
}

export async function deleteSession(db: Db, token: string): Promise<void> {
  await db.pool.query(`DELETE FROM sessions WHERE token_hash = $1`, [hash(token)]);
}
