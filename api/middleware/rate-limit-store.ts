import { prepared, type Db } from "../../db/client.js";

/**
 * Token buckets in Postgres (GCRA: one "theoretical arrival time" per key), shared by every API replica.
 * A bucket holds `limit` requests and refills one every `periodMs / limit`: a burst of `limit`, then a steady
 * `limit` per period. Unlike fixed windows there is no boundary at which twice the limit gets through.
 */
export type Rate = { limit: number; periodMs: number };

export type Take = {
  allowed: boolean;
  /** Requests that could be made right now. */
  remaining: number;
  /** Milliseconds until the bucket is full again (draft-7 `reset`). */
  resetMs: number;
  /** When refused: milliseconds until the next request would be allowed. */
  retryAfterMs: number;
};

/** `tat` as epoch milliseconds with its microseconds (a JS Date would drop them). */
const MS = "(extract(epoch FROM tat) * 1000)::float8";
/**
 * How far apart the clocks of API replicas may be. Skew within it only delays a bucket's refill; it can never
 * refill one (which alternating between replicas would turn into a fresh burst each time).
 */
export const CLOCK_SKEW_TOLERANCE_MS = 5 * 60_000;
/**
 * Where a bucket's time continues from: its own, or now when that is in the past (a full bucket). An allowed
 * take ends at most a period ahead of its clock, so a time beyond a period plus the skew tolerance was written
 * by a clock since set back (an operator's correction, a test): the bucket starts afresh rather than stay shut
 * until that time arrives.
 */
const BASE = `CASE WHEN b.tat > $2::timestamptz + ($4 + ${CLOCK_SKEW_TOLERANCE_MS}) * interval '1 millisecond' THEN $2::timestamptz ELSE GREATEST(b.tat, $2::timestamptz) END`;
/** Whole requests in a fraction of the period; the epsilon absorbs microsecond rounding of `tat`. */
const whole = (x: number) => Math.floor(x + 1e-6);

/** The refill interval in whole microseconds (Postgres's precision), and the period as `limit` of them. */
function steps(rate: Rate) {
  const interval = Math.round((rate.periodMs * 1000) / rate.limit) / 1000;
  return { interval, period: interval * rate.limit };
}

/** A bucket whose time lies in the past is full, like one without a row: such rows are deleted now and then. */
const PRUNE_EVERY = 200;
const PRUNE_BATCH = 1000;
let takes = 0;

/**
 * Takes one request from the bucket `key`, in one statement: the conditional upsert is atomic, concurrent
 * requests of one key queue on its row. `now` is the caller's clock (ms; injectable in tests).
 */
export async function take(db: Db, key: string, rate: Rate, now: number): Promise<Take> {
  return (await takeAnd(db, key, rate, now)).take;
}

/** More work for take's statement: another bucket to peek at, and CTEs with one column of their own. */
export type Also = {
  peek?: { key: string; rate: Rate };
  /** CTEs to append (after a comma), their parameters numbered from `firstParam`, and the column to return. */
  sql?: (firstParam: number) => { ctes: string; column: string; params: unknown[] };
};

/**
 * take() plus, in the same statement (one round trip), a peek at another bucket and whatever `also.sql` reads
 * (api/middleware/ip-limits.ts: the address's request budget, its failed-key budget and the API key).
 */
export async function takeAnd(db: Db, key: string, rate: Rate, now: number, also: Also = {}) {
  const { interval, period } = steps(rate);
  const params: unknown[] = [key, new Date(now), interval, period];
  if (also.peek) params.push(also.peek.key);
  const extra = also.sql?.(params.length + 1);
  if (extra) params.push(...extra.params);
  // `current` reads the statement's snapshot: the row as it was when a refused request found it.
  // Prepared: the text depends only on whether there is a peek and which CTEs (one shape per caller).
  const { rows } = await db.pool.query<{ taken: number | null; current: number | null; peeked: number | null; also: unknown }>(
    prepared(
      `WITH taken AS (
       INSERT INTO rate_limit_buckets AS b (key, tat) VALUES ($1, $2::timestamptz + $3 * interval '1 millisecond')
       ON CONFLICT (key) DO UPDATE SET tat = ${BASE} + $3 * interval '1 millisecond'
        WHERE ${BASE} + $3 * interval '1 millisecond' <= $2::timestamptz + $4 * interval '1 millisecond'
       RETURNING tat)${extra ? `, ${extra.ctes}` : ""}
     SELECT (SELECT ${MS} FROM taken) AS taken, (SELECT ${MS} FROM rate_limit_buckets WHERE key = $1) AS current,
       ${also.peek ? `(SELECT ${MS} FROM rate_limit_buckets WHERE key = $5)` : "NULL"} AS peeked,
       ${extra ? extra.column : "NULL"} AS also`,
      params,
    ),
  );
  if (++takes % PRUNE_EVERY === 0) void prune(db, now).catch(() => {});
  const { taken, current, peeked } = rows[0]!;
  let result: Take;
  if (taken !== null) {
    const ahead = taken - now;
    result = { allowed: true, remaining: whole((period - ahead) / interval), resetMs: ahead, retryAfterMs: 0 };
  } else {
    // No row visible to the snapshot: another request created it meanwhile; it is full for one interval.
    const tat = current ?? now + period;
    result = { allowed: false, remaining: 0, resetMs: tat - now, retryAfterMs: Math.max(1, tat + interval - period - now) };
  }
  return { take: result, peek: also.peek ? peekAt(peeked, also.peek.rate, now) : undefined, also: rows[0]!.also };
}

/** Whether a request could be taken from `key` now, without taking it (for budgets spent only on failure). */
export async function peek(db: Db, key: string, rate: Rate, now: number): Promise<Take> {
  const { rows } = await db.pool.query<{ tat: number }>(`SELECT ${MS} AS tat FROM rate_limit_buckets WHERE key = $1`, [key]);
  return peekAt(rows[0]?.tat ?? null, rate, now);
}

/** peek() of a bucket whose time was read as `stored` (null: no row, a full bucket). */
function peekAt(stored: number | null, rate: Rate, now: number): Take {
  const { interval, period } = steps(rate);
  const at = stored ?? now;
  const tat = at > now + period + CLOCK_SKEW_TOLERANCE_MS ? now : Math.max(at, now); // as BASE
  const ahead = tat - now;
  const allowed = ahead + interval <= period;
  return {
    allowed,
    remaining: Math.max(0, whole((period - ahead) / interval)),
    resetMs: ahead,
    retryAfterMs: allowed ? 0 : tat + interval - period - now,
  };
}

/** Deletes full buckets (time in the past), a batch at a time; a bucket taken from meanwhile is kept (rechecked under its lock). */
export async function prune(db: Db, now: number): Promise<number> {
  const { rowCount } = await db.pool.query(
    `DELETE FROM rate_limit_buckets WHERE tat < $1 AND key IN (SELECT key FROM rate_limit_buckets WHERE tat < $1 LIMIT ${PRUNE_BATCH})`,
    [new Date(now)],
  );
  return rowCount ?? 0;
}
