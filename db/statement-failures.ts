import pg from "pg";

// What a failed statement of the creation path means for running it again (core/batcher.ts and its callers).

/** The SQLSTATE of an error Postgres reported, or undefined (a dropped connection, a bug: maybe committed). */
export const sqlState = (e: unknown): string | undefined => (e instanceof pg.DatabaseError ? e.code : undefined);

/** Deadlock or serialization failure: Postgres rolled the statement back, so running it again is safe. */
export const isConflict = (e: unknown) => ["40P01", "40001"].includes(sqlState(e) ?? "");

/**
 * Whether a failed batch statement may be run again in parts: Postgres refused it for its data (classes 22 and 23;
 * the batch guards raise 22P02) or a conflict, so nothing of it was committed and a part without the bad item can
 * pass. Anything else (a lock timeout would only wait again; a lost connection may have committed) is final.
 */
export function isSplittable(e: unknown): boolean {
  const state = sqlState(e);
  return state !== undefined && (state.startsWith("22") || state.startsWith("23") || isConflict(e));
}

/** Runs `fn` again after a deadlock or serialization failure (at most `retries` times): the failed try left nothing. */
export async function retryConflicts<T>(fn: () => Promise<T>, retries = 2): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= retries || !isConflict(e)) throw e;
    }
  }
}

/**
 * How long a batched statement waits for a row lock before it fails (55P03): a transaction holding a row of the
 * creation path (a merchant, a bucket) must not stall every creation of the process behind it.
 */
export const BATCH_LOCK_TIMEOUT = "2s";

/**
 * A CTE setting lock_timeout for the rest of its statement (the implicit transaction ends with it). Statements read
 * it first, before taking any lock. statement_timeout cannot be set this way: Postgres arms it before the statement runs.
 */
export const boundedLocksCte = (param: string) =>
  `bounded AS MATERIALIZED (SELECT set_config('lock_timeout', ${param}, true) AS lock_timeout)`;

/**
 * SQL that fails the statement (22P02, so splittable) when the counts `written` and `expected` differ. The counts are
 * part of the message: a constant one would be cast, and fail, when the statement is planned.
 */
export const failUnless = (written: string, expected: string, what: string) =>
  `CASE WHEN ${written} <> ${expected} THEN ('batch guard: ${what}: ' || ${written} || ' of ' || ${expected})::int END`;
