import type { AppDeps } from "../../core/deps.js";
import { SEQUENCE_BATCH, sequenceMerchant } from "./sequence.js";

// Upkeep of the event feed, one pass of processors/event-feed.ts: positions what has committed, merchant by merchant
// (so a backlog never piles up for the first reader; a merchant whose lock is busy waits for the next pass), then
// deletes positioned events written more than EVENT_FEED_RETENTION_DAYS (default 30) ago. Deliveries and their logs
// are not touched: the feed is a copy kept for reconciliation, not the outbox.

/** Below every merchant id: where the keyset starts. */
const NIL_UUID = "00000000-0000-0000-0000-000000000000";
/** Merchants listed per query. */
const MERCHANT_BATCH = 500;
/** Rows deleted per statement. */
const PURGE_BATCH = 10_000;

export async function maintainEventFeed(deps: Pick<AppDeps, "db" | "config">): Promise<{ positioned: number; purged: number }> {
  let positioned = 0;
  // Every merchant with unpositioned events, by keyset on the unsequenced index.
  let after = NIL_UUID;
  for (;;) {
    const { rows } = await deps.db.pool.query<{ merchant_id: string }>(
      `SELECT DISTINCT merchant_id FROM event_feed WHERE position IS NULL AND merchant_id > $1 ORDER BY merchant_id LIMIT $2`,
      [after, MERCHANT_BATCH],
    );
    for (const { merchant_id } of rows) {
      for (;;) {
        const s = await sequenceMerchant(deps.db, merchant_id);
        positioned += s?.positioned ?? 0;
        if (!s || s.positioned < SEQUENCE_BATCH) break;
      }
    }
    if (rows.length < MERCHANT_BATCH) break;
    after = rows.at(-1)!.merchant_id;
  }
  // Each statement its own transaction, no lock but its rows': readers and sequencers never wait for it. Positioned
  // rows only (an event nobody could have read yet is never deleted), by the time the row was written, not the
  // event's own time (an event written late with an old time stays its full retention).
  let purged = 0;
  for (;;) {
    const { rowCount } = await deps.db.pool.query(
      `DELETE FROM event_feed WHERE seq IN (
         SELECT seq FROM event_feed
          WHERE position IS NOT NULL AND inserted_at < now() - $1::int * interval '1 day'
          ORDER BY inserted_at LIMIT $2)`,
      [deps.config.EVENT_FEED_RETENTION_DAYS, PURGE_BATCH],
    );
    purged += rowCount ?? 0;
    if ((rowCount ?? 0) < PURGE_BATCH) return { positioned, purged };
  }
}
