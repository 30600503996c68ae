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
export const MS = "(extract(epoch FROM tat) * 1000)::float8";
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
const baseOf = (period: string) =>
  `CASE WHEN b.tat > $2::timestamptz + (${period} + ${CLOCK_SKEW_TOLERANCE_MS}) * interval '1 millisecond' THEN $2::timestamptz ELSE GREATEST(b.tat, $2::timestamptz) END`;
const BASE = baseOf("$4");
/** Whole requests in a fraction of the period; the epsilon absorbs microsecond rounding of `tat`. */
const whole = (x: number) => Math.floor(x + 1e-6);

/** The refill interval in whole microseconds (Postgres's precision), and the period as `limit` of them. */
export function steps(rate: Rate) {
  const interval = Math.round((rate.periodMs * 1000) / rate.limit) / 1000;
  return { interval, period: interval * rate.limit };
}

/** A bucket whose time lies in the past is full, like one without a row: such rows are deleted now and then. */
const PRUNE_EVERY = 200;
const PRUNE_BATCH = 1000;
let takes = 0;

/** Counts `n` takes; every PRUNE_EVERY takes, full buckets are pruned in the background. */
export function countTakes(db: Db, now: number, n: number): void {
  const before = takes;
  takes += n;
  if (Math.floor(takes / PRUNE_EVERY) !== Math.floor(before / PRUNE_EVERY)) void prune(db, now).catch(() => {});
}

/**
 * Takes one request from the bucket `key`, in one statement: the conditional upsert is atomic, concurrent
 * requests of one key queue on its row. `now` is the caller's clock (ms; injectable in tests).
 */
export async function take(db: Db, key: string, rate: Rate, now: number): Promise<Take> {
  return (await takeAnd(db, key, rate, now)).take;
}

/** More work for take's statement: another bucket to peek at, CTEs with one column of their own, a second take. */
export type Also = {
  peek?: { key: string; rate: Rate };
  /** CTEs to append (after a comma), their parameters numbered from `firstParam`, and the column to return. */
  sql?: (firstParam: number) => { ctes: string; column: string; params: unknown[] };
  /**
   * A second take, of the bucket whose key the SQL expression `keySql` gives (over the CTEs of `sql`), made only when
   * the first take and the peek allow and the key is not null: a merchant's budget, known once `sql` found the key.
   */
  then?: { keySql: string; rate: Rate };
};

/** A take's answer from what its statement returned: the new time of an allowed take, or the bucket's time as found. */
export function takeOf(taken: number | null, current: number | null, rate: Rate, now: number): Take {
  const { interval, period } = steps(rate);
  if (taken !== null) {
    const ahead = taken - now;
    return { allowed: true, remaining: whole((period - ahead) / interval), resetMs: ahead, retryAfterMs: 0 };
  }
  // No row visible to the snapshot: another request created it meanwhile; it is full for one interval.
  const tat = current ?? now + period;
  return { allowed: false, remaining: 0, resetMs: tat - now, retryAfterMs: Math.max(1, tat + interval - period - now) };
}

export type TakeRow = {
  taken: number | null;
  current: number | null;
  peeked: number | null;
  also: unknown;
  then_tried: boolean | null;
  then_taken: number | null;
  then_current: number | null;
};

/**
 * take() plus, in the same statement (one round trip), a peek at another bucket, whatever `also.sql` reads and a second
 * take (api/middleware/ip-limits.ts: the address's request budget, its failed-key budget, the API key, and the route's
 * budget of the key's merchant). `then` is undefined when the second take was not made.
 */
export async function takeAnd(db: Db, key: string, rate: Rate, now: number, also: Also = {}) {
  const { interval, period } = steps(rate);
  const params: unknown[] = [key, new Date(now), interval, period];
  const $ = (v: unknown) => `$${params.push(v)}`;
  const peekKey = also.peek ? $(also.peek.key) : "";
  const extra = also.sql?.(params.length + 1);
  if (extra) params.push(...extra.params);
  let then = "";
  if (also.then) {
    let peekOk = "true";
    if (also.peek) {
      // As peekAt(): allowed unless the bucket's time is within an interval of a full period ahead; a time beyond the
      // period plus the skew tolerance counts as now.
      const p = steps(also.peek.rate);
      peekOk = `(SELECT coalesce(bool_and(tat > $2::timestamptz + (${$(p.period)} + ${CLOCK_SKEW_TOLERANCE_MS}) * interval '1 millisecond'
        OR tat <= $2::timestamptz + ${$(p.period - p.interval)} * interval '1 millisecond'), true) FROM rate_limit_buckets WHERE key = ${peekKey})`;
    }
    const t = steps(also.then.rate);
    const [i2, p2] = [$(t.interval), $(t.period)];
    const base2 = baseOf(p2);
    then = `, then_key AS (SELECT ${also.then.keySql} AS key),
     then_tried AS (SELECT key FROM then_key WHERE key IS NOT NULL AND EXISTS (SELECT 1 FROM taken) AND ${peekOk}),
     then_taken AS (
       INSERT INTO rate_limit_buckets AS b (key, tat) SELECT key, $2::timestamptz + ${i2} * interval '1 millisecond' FROM then_tried
       ON CONFLICT (key) DO UPDATE SET tat = ${base2} + ${i2} * interval '1 millisecond'
        WHERE ${base2} + ${i2} * interval '1 millisecond' <= $2::timestamptz + ${p2} * interval '1 millisecond'
       RETURNING tat)`;
  }
  // `current` reads the statement's snapshot: the row as it was when a refused request found it.
  // Prepared: the text depends only on whether there is a peek and which CTEs (one shape per caller).
  const { rows } = await db.pool.query<TakeRow>(
    prepared(
      `WITH taken AS (
       INSERT INTO rate_limit_buckets AS b (key, tat) VALUES ($1, $2::timestamptz + $3 * interval '1 millisecond')
       ON CONFLICT (key) DO UPDATE SET tat = ${BASE} + $3 * interval '1 millisecond'
        WHERE ${BASE} + $3 * interval '1 millisecond' <= $2::timestamptz + $4 * interval '1 millisecond'
       RETURNING tat)${extra ? `, ${extra.ctes}` : ""}${then}
     SELECT (SELECT ${MS} FROM taken) AS taken, (SELECT ${MS} FROM rate_limit_buckets WHERE key = $1) AS current,
       ${also.peek ? `(SELECT ${MS} FROM rate_limit_buckets WHERE key = ${peekKey})` : "NULL"} AS peeked,
       ${extra ? extra.column : "NULL"} AS also,
       ${then ? "EXISTS (SELECT 1 FROM then_tried)" : "NULL"} AS then_tried,
       ${then ? `(SELECT ${MS} FROM then_taken)` : "NULL"} AS then_taken,
       ${then ? `(SELECT ${MS} FROM rate_limit_buckets WHERE key = (SELECT key FROM then_tried))` : "NULL"} AS then_current`,
      params,
    ),
  );
  countTakes(db, now, 1);
  const r = rows[0]!;
  return {
    take: takeOf(r.taken, r.current, rate, now),
    peek: also.peek ? peekAt(r.peeked, also.peek.rate, now) : undefined,
    also: r.also,
    then: also.then && r.then_tried ? takeOf(r.then_taken, r.then_current, also.then.rate, now) : undefined,
  };
}

/** Whether a request could be taken from `key` now, without taking it (for budgets spent only on failure). */
export async function peek(db: Db, key: string, rate: Rate, now: number): Promise<Take> {
  const { rows } = await db.pool.query<{ tat: number }>(`SELECT ${MS} AS tat FROM rate_limit_buckets WHERE key = $1`, [key]);
  return peekAt(rows[0]?.tat ?? null, rate, now);
}

/** peek() of a bucket whose time was read as `stored` (null: no row, a full bucket). */
export function peekAt(stored: number | null, rate: Rate, now: number): Take {
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

/**
 * Deletes full buckets (time in the past), a batch at a time; a bucket taken from meanwhile is kept (rechecked under its
 * lock). SKIP LOCKED: a bucket a take holds is left for the next prune, so prune never waits in a take's lock order.
 */
export async function prune(db: Db, now: number): Promise<number> {
  const { rowCount } = await db.pool.query(
    `DELETE FROM rate_limit_buckets WHERE tat < $1 AND key IN (
       SELECT key FROM rate_limit_buckets WHERE tat < $1 ORDER BY key LIMIT ${PRUNE_BATCH} FOR UPDATE SKIP LOCKED)`,
    [new Date(now)],
  );
  return rowCount ?? 0;
}
