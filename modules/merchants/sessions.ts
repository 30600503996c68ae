import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { Invalid, Unauthorized } from "../../core/errors.js";
import type { Db } from "../../db/client.js";
import { hashToken, newToken } from "./api-keys.js";
import {
  ACCOUNT_THROTTLE,
  ADDRESS_THROTTLE,
  accountKey,
  addressKey,
  clearFailures,
  releaseAttempt,
  reserveAttempt,
} from "./login-throttle.js";
import { hashPassword, verifyPassword } from "./passwords.js";

/** Dashboard session cookie: an opaque random token; only its SHA-256 is stored. */
export const SESSION_COOKIE = "cp_session";
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export async function createSession(db: Db, merchantId: string, now: number): Promise<{ token: string; expiresAt: Date }> {
  const token = newToken();
  const expiresAt = new Date(now + SESSION_TTL_MS);
  await db.pool.query(`INSERT INTO sessions (merchant_id, token_hash, expires_at) VALUES ($1, $2, $3)`, [
    merchantId,
    hashToken(token),
    expiresAt,
  ]);
  return { token, expiresAt };
}

export async function merchantIdForSession(db: Db, token: string | undefined, now: number): Promise<string | null> {
  if (!token) return null;
  const { rows } = await db.pool.query(`SELECT merchant_id FROM sessions WHERE token_hash = $1 AND expires_at > $2`, [
    hashToken(token),
    new Date(now),
  ]);
  return rows[0]?.merchant_id ?? null;
}

export async function deleteSession(db: Db, token: string): Promise<void> {
  await db.pool.query(`DELETE FROM sessions WHERE token_hash = $1`, [hashToken(token)]);
}

// The e-mail is only looked up: any address an account was created with must be able to log in.
export const loginForm = z.object({ email: z.string().min(1), password: z.string().min(1) });

/** Checked when no account matches, so an unknown e-mail costs as much as a wrong password (no account discovery by timing). */
let dummyHash: Promise<string> | undefined;

/**
 * Dashboard login (`POST /auth/login`): `{email, password}` from a client address (`from`) → a new session.
 * Throws Invalid, RateLimited (`Too many login attempts`, login-throttle.ts) or Unauthorized. A hash of
 * older parameters is replaced by today's once the password matched it.
 */
export async function login(
  deps: Pick<AppDeps, "db" | "now">,
  body: unknown,
  from: string,
): Promise<{ merchantId: string; token: string; expiresAt: Date }> {
  const form = loginForm.safeParse(body);
  if (!form.success) throw new Invalid("Invalid form data");
  const email = form.data.email.toLowerCase();
  const [account, address] = [accountKey(email), addressKey(from)];
  // Both are booked as failures before the (costly) password check, atomically: concurrent guesses cannot all
  // pass a check made before any of them failed. A success gives them back.
  await reserveAttempt(deps, address, ADDRESS_THROTTLE);
  await reserveAttempt(deps, account, ACCOUNT_THROTTLE);
  const { rows } = await deps.db.pool.query(`SELECT id, password_hash FROM merchants WHERE email = $1`, [email]);
  const m = rows[0];
  const check = await verifyPassword(form.data.password, m?.password_hash ?? (await (dummyHash ??= hashPassword("no account"))));
  if (!m?.password_hash || !check.ok) throw new Unauthorized("Invalid email or password");
  await clearFailures(deps.db, account);
  await releaseAttempt(deps.db, address, ADDRESS_THROTTLE);
  if (check.outdated)
    await deps.db.pool.query(`UPDATE merchants SET password_hash = $1 WHERE id = $2 AND password_hash = $3`, [
      await hashPassword(form.data.password),
      m.id,
      m.password_hash,
    ]);
  return { merchantId: m.id, ...(await createSession(deps.db, m.id, deps.now())) };
}

/** `POST /auth/logout`: ends the session of the cookie, if any. */
export async function logout(deps: Pick<AppDeps, "db">, token: string | undefined): Promise<void> {
  if (token) await deleteSession(deps.db, token);
}
