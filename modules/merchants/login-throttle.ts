import { createHash } from "node:crypto";
import type { AppDeps } from "../../core/deps.js";
import { RateLimited } from "../../core/errors.js";
import type { Db } from "../../db/client.js";

/**
 * Failed dashboard logins slow down further attempts, per account (the lowercased e-mail, whether or not an
 * account has it, so answers do not tell which exist) and per client address. After `free` failures each new
 * failure locks the key for `baseMs`, doubled per further failure, at most `maxMs`; a key whose last failure
 * is `forgetMs` old starts over. A successful login clears its account's count (not its address's: one's own
 * account must not wash an address's guesses at others).
 */
export type ThrottlePolicy = { free: number; baseMs: number; maxMs: number; forgetMs: number };

/** A count is forgotten an hour after its last failure. */
const FORGET_MS = 60 * 60_000;
/** 5 failures, then 30 s, 1 min, 2 min, … up to 15 min between attempts. */
export const ACCOUNT_THROTTLE: ThrottlePolicy = { free: 5, baseMs: 30_000, maxMs: 15 * 60_000, forgetMs: FORGET_MS };
/** 20 failures (an office behind one address mistypes too), then the same waits. */
export const ADDRESS_THROTTLE: ThrottlePolicy = { free: 20, baseMs: 30_000, maxMs: 15 * 60_000, forgetMs: FORGET_MS };

export const TOO_MANY_LOGINS = "Too many login attempts";

export const accountKey = (email: string) => `account:${createHash("sha256").update(email.toLowerCase()).digest("hex")}`;
export const addressKey = (address: string) => `address:${address}`;

const ms = (col: string) => `(extract(epoch FROM ${col}) * 1000)::float8`;
// The count after this failure, and the lock it earns ($2 now, $3 free, $4 base ms, $5 max ms, $6 forget ms).
const COUNT = `CASE WHEN a.last_failure_at < $2::timestamptz - $6 * interval '1 millisecond' THEN 1 ELSE a.failures + 1 END`;
const lockAfter = (n: string) =>
  `CASE WHEN ${n} >= $3 THEN $2::timestamptz + LEAST($5, $4 * power(2, ${n} - $3)) * interval '1 millisecond' END`;

let writes = 0;

/**
 * Counts one failure of `key`, unless the key is locked and `force` is false; in one statement, so concurrent
 * attempts cannot all pass a check made before any of them failed. Returns the lock's end (ms) when refused.
 */
async function countFailure(db: Db, key: string, p: ThrottlePolicy, now: number, force: boolean): Promise<number | null> {
  const { rows } = await db.pool.query<{ counted: number | null; locked: number | null }>(
    `WITH c AS (
       INSERT INTO login_attempts AS a (key, failures, last_failure_at, locked_until)
       VALUES ($1, 1, $2, ${lockAfter("1")})
       ON CONFLICT (key) DO UPDATE SET failures = ${COUNT}, last_failure_at = $2, locked_until = ${lockAfter(COUNT)}
        WHERE $7 OR a.locked_until IS NULL OR a.locked_until <= $2
       RETURNING failures)
     SELECT (SELECT failures FROM c) AS counted, (SELECT ${ms("locked_until")} FROM login_attempts WHERE key = $1) AS locked`,
    [key, new Date(now), p.free, p.baseMs, p.maxMs, p.forgetMs, force],
  );
  if (++writes % 100 === 0) void prune(db, now).catch(() => {});
  const { counted, locked } = rows[0]!;
  return counted === null ? (locked ?? now + p.baseMs) : null;
}

const refuse = (until: number, now: number) => new RateLimited(Math.max(1, Math.ceil((until - now) / 1000)), TOO_MANY_LOGINS);

/**
 * Books an attempt on `key` as a failure before the password is checked (cleared by `clearFailures` when it
 * succeeds); throws RateLimited while the key is locked.
 */
export async function reserveAttempt(deps: Pick<AppDeps, "db" | "now">, key: string, p: ThrottlePolicy): Promise<void> {
  const now = deps.now();
  const locked = await countFailure(deps.db, key, p, now, false);
  if (locked !== null) throw refuse(locked, now);
}

/**
 * Counts one failure of `key` even while it is locked (and extends the lock it earns): an attempt that a lock of this
 * key does not hold back, still counted there.
 */
export async function countAttempt(deps: Pick<AppDeps, "db" | "now">, key: string, p: ThrottlePolicy): Promise<void> {
  await countFailure(deps.db, key, p, deps.now(), true);
}

/** Failures of `key` within the policy's memory (0 when none, or forgotten). */
export async function failuresOf(deps: Pick<AppDeps, "db" | "now">, key: string, p: ThrottlePolicy): Promise<number> {
  const { rows } = await deps.db.pool.query<{ failures: number }>(
    `SELECT failures FROM login_attempts WHERE key = $1 AND last_failure_at >= $2`,
    [key, new Date(deps.now() - p.forgetMs)],
  );
  return rows[0]?.failures ?? 0;
}

/**
 * Gives back one attempt booked by `reserveAttempt` that turned out to succeed, without forgetting the key's
 * other failures (an address's count survives one good login from it); a lock it no longer earns is lifted.
 */
export async function releaseAttempt(db: Db, key: string, p: ThrottlePolicy): Promise<void> {
  await db.pool.query(
    `UPDATE login_attempts SET failures = GREATEST(failures - 1, 0),
       locked_until = CASE WHEN failures - 1 < $2 THEN NULL ELSE locked_until END
     WHERE key = $1`,
    [key, p.free],
  );
}

export async function clearFailures(db: Db, key: string): Promise<void> {
  await db.pool.query(`DELETE FROM login_attempts WHERE key = $1`, [key]);
}

/** Deletes counts that are forgotten and locks that are over. */
async function prune(db: Db, now: number): Promise<void> {
  await db.pool.query(`DELETE FROM login_attempts WHERE last_failure_at < $1 AND (locked_until IS NULL OR locked_until < $2)`, [
    new Date(now - FORGET_MS),
    new Date(now),
  ]);
}
