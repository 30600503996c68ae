import type pg from "pg";
import { withTransaction, type Db } from "../../db/client.js";

// Feed order. An event row gets its `seq` when it is written, but the transaction that wrote it may commit after one
// that took a later seq: a reader paging by seq could pass an event that was not committed yet and never see it. So
// the feed reads `position` instead, counted per merchant and given to rows already committed, in seq order, one batch
// at a time, by whoever holds the merchant's sequencing lock. Whatever a reader has seen sits below every position
// still to be given: an event committed late lands after the ones read, never behind the reader's cursor.
//
// The lock is a transaction advisory lock per merchant taken with try (pg_try_advisory_xact_lock): nobody ever waits
// for it. A reader that finds it held reads what is positioned already (the holder's positions, once committed, all
// lie after it); the event-feed processor skips that merchant until its next pass. Merchants never contend.

/** Rows positioned per statement: a backlog (nobody read for a while) is worked through in bounded steps. */
export const SEQUENCE_BATCH = 5_000;

/** The advisory lock key of a merchant's feed (hashtext, as the other advisory locks here; a collision only skips a pass). */
const LOCK_SQL = `SELECT pg_try_advisory_xact_lock(hashtext('event-feed:' || $1::text)) AS ok`;

/**
 * Positions the merchant's committed events that have none yet (at most `limit`), inside the caller's transaction,
 * which then holds the merchant's sequencing lock until it ends. Null when another transaction holds that lock (it is
 * positioning them). Else the head (the merchant's last position given) and how many rows were positioned.
 */
export async function sequenceIn(
  client: pg.PoolClient,
  merchantId: string,
  limit = SEQUENCE_BATCH,
): Promise<{ head: string; positioned: number } | null> {
  const { rows: lock } = await client.query<{ ok: boolean }>(LOCK_SQL, [merchantId]);
  if (!lock[0]!.ok) return null;
  // Separate statements: in READ COMMITTED each one's snapshot is taken after the lock is ours, so it sees what the
  // previous holder positioned (a transaction is visible before its locks are released).
  const { rows: heads } = await client.query<{ position: string }>(`SELECT position FROM event_feed_heads WHERE merchant_id = $1`, [
    merchantId,
  ]);
  const head = heads[0]?.position ?? "0";
  const { rows: done } = await client.query<{ positioned: string }>(
    `WITH todo AS (
       SELECT seq, row_number() OVER (ORDER BY seq) AS rn
         FROM (SELECT seq FROM event_feed WHERE merchant_id = $1 AND position IS NULL ORDER BY seq LIMIT $3) batch),
     upd AS (
       UPDATE event_feed e SET position = $2::bigint + todo.rn FROM todo WHERE e.seq = todo.seq RETURNING 1)
     SELECT count(*) AS positioned FROM upd`,
    [merchantId, head, limit],
  );
  // Nothing else writes an unpositioned row (the purge deletes positioned ones only): every planned row was positioned.
  const positioned = Number(done[0]!.positioned);
  if (positioned === 0) return { head, positioned };
  const { rows: moved } = await client.query<{ position: string }>(
    `INSERT INTO event_feed_heads (merchant_id, position) VALUES ($1, $2::bigint + $3)
     ON CONFLICT (merchant_id) DO UPDATE SET position = EXCLUDED.position
     RETURNING position`,
    [merchantId, head, positioned],
  );
  return { head: moved[0]!.position, positioned };
}

/** Positions one batch of the merchant's committed events in a transaction of its own; null when the lock was busy. */
export function sequenceMerchant(db: Db, merchantId: string, limit = SEQUENCE_BATCH) {
  return withTransaction(db, (client) => sequenceIn(client, merchantId, limit));
}

/** Has the merchant a committed event still without a position? (A read on the partial index: cheap when none.) */
export async function hasUnsequenced(db: Db, merchantId: string): Promise<boolean> {
  const { rows } = await db.pool.query(`SELECT 1 FROM event_feed WHERE merchant_id = $1 AND position IS NULL LIMIT 1`, [merchantId]);
  return rows.length > 0;
}

/**
 * What a reader does before reading the merchant's feed: positions what has committed (one batch) when anything waits
 * and the lock is free, so an event is readable as soon as it commits, with or without the event-feed processor. A
 * read with nothing waiting writes nothing; a busy lock is not waited for.
 */
export async function sequenceForRead(db: Db, merchantId: string): Promise<void> {
  if (await hasUnsequenced(db, merchantId)) await sequenceMerchant(db, merchantId);
}

/**
 * The end of the merchant's feed as it stands: its last position given, once what has committed is positioned (when
 * the lock is free). A sequencer still running gives the next positions after the value read, so a reader starting
 * there misses nothing.
 */
export async function feedHead(db: Db, merchantId: string): Promise<string> {
  await sequenceForRead(db, merchantId);
  const { rows } = await db.pool.query<{ position: string }>(`SELECT position FROM event_feed_heads WHERE merchant_id = $1`, [merchantId]);
  return rows[0]?.position ?? "0";
}
