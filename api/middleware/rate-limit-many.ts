import { prepared, type Db } from "../../db/client.js";
import { BATCH_LOCK_TIMEOUT, boundedLocksCte, failUnless } from "../../db/statement-failures.js";
import { CLOCK_SKEW_TOLERANCE_MS, countTakes, MS, peekAt, steps, takeOf, type Rate, type TakeRow } from "./rate-limit-store.js";

/** One request's part of takeMany(): takeAnd()'s take, peek, lookup and second take, for one request of many. */
export type RequestTakes = {
  /** The bucket of the first take (every request of the batch has the same rate). */
  key: string;
  /** The bucket peeked at (same rate for every request). */
  peekKey: string;
  /** The value the batched lookup reads (`lookup` of CTE `i`), or null: nothing to look up. */
  lookup: string | null;
  /** The second take, when the lookup found an id: of the bucket `prefix || id || suffix`. */
  then: { prefix: string; suffix: string; rate: Rate } | null;
};

/**
 * The batched lookup of takeMany(): `ctes` (appended after a comma) read CTE `i` (`ord`, `lookup`) and define at least
 * `keys` (`ord`, `id`: one row per request whose lookup found something); `column` is returned per request (over `i`).
 */
export type BatchedLookup = { ctes: string; column: string };

/** Whole microseconds (Postgres's precision) of a rate's refill interval and period. */
function microsteps(rate: Rate) {
  const interval = Math.round(steps(rate).interval * 1000);
  return { interval, period: interval * rate.limit };
}

/** rate-limit-store.ts BASE, of a bucket's time `l.tat` as locked, with the period `g.period` in microseconds. */
const LOCKED_BASE = `CASE WHEN l.tat > $8::timestamptz + (g.period + ${CLOCK_SKEW_TOLERANCE_MS * 1000}) * interval '1 microsecond' THEN $8::timestamptz
    ELSE GREATEST(l.tat, $8::timestamptz) END`;
const MS_OF = (tat: string) => `(extract(epoch FROM ${tat}) * 1000)::float8`;
const after = (p: string, n: string) => `${p}.base + (${n} * ${p}.iv)::float8 * interval '1 microsecond'`;

/**
 * The takes of one stage (`s`: 1, the addresses' budgets; 2, the merchants'), from CTE `r<s>` (`ord`, `key`, `iv`,
 * `period`, `rank` among the requests of its bucket). Lock order, the same in every statement and process: existing
 * buckets locked in key order, then new ones inserted in key order, then the locked ones written (an update before
 * the inserts would make a concurrent insert of that key wait on it). `p<s>`: per bucket, whether it existed, its time
 * as found, its base, and `n`: how many of its `k` takes fit (exactly as many sequential takes: whole microseconds).
 * A bucket another transaction created after this statement's snapshot is neither locked nor written: `guard<s>` then
 * fails the statement, nothing taken (22P02: its requests run alone, core/batcher.ts).
 */
const stage = (s: string) => `g${s} AS MATERIALIZED (
    SELECT key, min(iv) AS iv, min(period) AS period, count(*) AS k FROM r${s} GROUP BY key
  ), l${s} AS MATERIALIZED (
    SELECT key, tat FROM rate_limit_buckets WHERE key IN (SELECT key FROM g${s}) ORDER BY key FOR UPDATE
  ), p${s} AS MATERIALIZED (
    SELECT g.key, g.iv, l.key IS NOT NULL AS existed, l.tat AS found, b.base,
      least(g.k, greatest(0, floor(((extract(epoch FROM $8::timestamptz) - extract(epoch FROM b.base)) * 1000000 + g.period) / g.iv)))::bigint AS n
    FROM g${s} g LEFT JOIN l${s} l ON l.key = g.key CROSS JOIN LATERAL (SELECT ${LOCKED_BASE} AS base) b
  ), n${s} AS (
    INSERT INTO rate_limit_buckets (key, tat)
    SELECT p.key, ${after("p", "p.n")} FROM p${s} p WHERE NOT p.existed AND p.n > 0 AND (SELECT count(*) FROM l${s}) >= 0
    ORDER BY p.key
    ON CONFLICT (key) DO NOTHING RETURNING key
  ), u${s} AS (
    UPDATE rate_limit_buckets b SET tat = ${after("p", "p.n")} FROM p${s} p
     WHERE b.key = p.key AND p.existed AND p.n > 0 AND (SELECT count(*) FROM n${s}) >= 0
    RETURNING b.key
  ), guard${s} AS MATERIALIZED (
    SELECT ${failUnless(
      `((SELECT count(*) FROM u${s}) + (SELECT count(*) FROM n${s}))`,
      `(SELECT count(*) FROM p${s} WHERE n > 0)`,
      "rate limit buckets written (one created concurrently)",
    )} AS failed
  )`;

/**
 * takeAnd() for many requests in one statement (api/middleware/ip-limits.ts, batched): each request's first take, its
 * peek, its lookup and its second take, answered as if the requests had been taken one after the other in their
 * order. Requests of one bucket take from it in turn (the k-th of a bucket gets the k-th token, or is refused once
 * they are gone); each bucket is written once. The merchants' buckets are locked only once the addresses' takes are
 * decided (stage 2 after stage 1, as takeAnd does), and only those of requests the first take allowed.
 */
export async function takeMany(db: Db, rate: Rate, peekRate: Rate, now: number, lookup: BatchedLookup, items: RequestTakes[]) {
  const first = microsteps(rate);
  const p = steps(peekRate);
  const params: unknown[] = [
    items.map((r) => r.key),
    items.map((r) => r.peekKey),
    items.map((r) => r.lookup),
    items.map((r) => r.then?.prefix ?? null),
    items.map((r) => r.then?.suffix ?? null),
    items.map((r) => (r.then ? microsteps(r.then.rate).interval : null)),
    items.map((r) => (r.then ? microsteps(r.then.rate).period : null)),
    new Date(now),
    first.interval,
    first.period,
    p.period,
    p.period - p.interval,
    BATCH_LOCK_TIMEOUT,
  ];
  const { rows } = await db.pool.query<TakeRow & { ord: string }>(prepared(takeManySql(lookup), params));
  countTakes(db, now, items.length);
  // The statement has committed: a wrong answer is an error, never a reason to take again.
  if (rows.length !== items.length) throw new Error(`takeMany: ${rows.length} rows for ${items.length} requests`);
  return rows.map((r, n) => {
    const item = items[n]!;
    if (Number(r.ord) !== n + 1) throw new Error(`takeMany: row ${n + 1} answered as ${r.ord}`);
    return {
      take: takeOf(r.taken, r.current, rate, now),
      peek: peekAt(r.peeked, peekRate, now),
      also: r.also,
      then: item.then && r.then_tried ? takeOf(r.then_taken, r.then_current, item.then.rate, now) : undefined,
    };
  });
}

const takeManySqls = new Map<string, string>();
function takeManySql(lookup: BatchedLookup): string {
  const cacheKey = lookup.ctes + "\n" + lookup.column;
  let text = takeManySqls.get(cacheKey);
  if (text) return text;
  // The peek (takeAnd's peekOk): the failed-key budget allows, or its time is far ahead (a clock set back).
  const peekOk = `(SELECT coalesce(bool_and(tat > $8::timestamptz + ($11::float8 + ${CLOCK_SKEW_TOLERANCE_MS}) * interval '1 millisecond'
             OR tat <= $8::timestamptz + $12::float8 * interval '1 millisecond'), true) FROM rate_limit_buckets WHERE key = i.peek_key)`;
  text = `WITH ${boundedLocksCte("$13")},
  i AS MATERIALIZED (
    SELECT u.* FROM bounded, unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int8[], $7::int8[])
      WITH ORDINALITY AS u(take_key, peek_key, lookup, then_prefix, then_suffix, then_iv, then_period, ord)
  ), ${lookup.ctes},
  r1 AS MATERIALIZED (
    SELECT ord, take_key AS key, $9::int8 AS iv, $10::int8 AS period, row_number() OVER (PARTITION BY take_key ORDER BY ord) AS rank FROM i
  ), ${stage("1")},
  w2 AS MATERIALIZED (
    -- After guard1: stage 1 is written before any merchant bucket is locked.
    SELECT i.ord, i.then_prefix || keys.id || i.then_suffix AS key, i.then_iv AS iv, i.then_period AS period
      FROM i JOIN keys ON keys.ord = i.ord JOIN r1 ON r1.ord = i.ord JOIN p1 ON p1.key = r1.key CROSS JOIN guard1
     WHERE i.then_prefix IS NOT NULL AND r1.rank <= p1.n AND ${peekOk}
  ), r2 AS MATERIALIZED (
    SELECT ord, key, iv, period, row_number() OVER (PARTITION BY key ORDER BY ord) AS rank FROM w2
  ), ${stage("2")}
  SELECT i.ord,
    CASE WHEN r1.rank <= p1.n THEN ${MS_OF(after("p1", "r1.rank"))} END AS taken,
    ${MS_OF(`CASE WHEN p1.n > 0 THEN ${after("p1", "p1.n")} ELSE p1.found END`)} AS current,
    (SELECT ${MS} FROM rate_limit_buckets WHERE key = i.peek_key) AS peeked,
    ${lookup.column} AS also,
    r2.ord IS NOT NULL AS then_tried,
    CASE WHEN r2.rank <= p2.n THEN ${MS_OF(after("p2", "r2.rank"))} END AS then_taken,
    ${MS_OF(`CASE WHEN p2.n > 0 THEN ${after("p2", "p2.n")} ELSE p2.found END`)} AS then_current,
    guard1.failed, guard2.failed AS failed2
  FROM i JOIN r1 ON r1.ord = i.ord JOIN p1 ON p1.key = r1.key
    LEFT JOIN r2 ON r2.ord = i.ord LEFT JOIN p2 ON p2.key = r2.key
    CROSS JOIN guard1 CROSS JOIN guard2
  ORDER BY i.ord`;
  takeManySqls.set(cacheKey, text);
  return text;
}
