import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { withTransaction } from "../../../db/client.js";
import {
  encodeFeedCursor,
  recordEvent,
  type EventInput,
  maintainEventFeed,
  sequenceIn,
  sequenceMerchant,
} from "../../../modules/events/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// The feed's order under concurrent writers, on the run's Postgres through the API (no processors: only readers and
// the explicit maintenance passes below position events). Events are recorded with the module function the outbox
// uses (recordEvent), inside transactions the test holds open, to commit them out of their write order.

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(async () => {
  await svc?.stop();
});
vi.setConfig({ testTimeout: 120_000 });

const DAY_MS = 86_400_000;

/** A payment event of `merchantId` as the outbox would record it (a fresh dedupe key). */
function input(merchantId: string, note: string, at = svc.clock.now()): EventInput {
  const paymentId = randomUUID();
  return {
    merchantId,
    kind: "payment",
    type: "payment.cancelled",
    paymentId,
    depositId: null,
    vaultId: null,
    dedupeKey: `ordering-test:${randomUUID()}`,
    payload: { event: "payment.cancelled", paymentId, status: "cancelled", note, timestamp: at },
    at,
  };
}
const commit = (e: EventInput) => withTransaction(svc.deps.db, (c) => recordEvent(c, e));
const feed = (apiKey: string, query = "") => svc.http("GET", `/v1/events${query}`, { apiKey });
const ids = (res: { body: any }) => res.body.data.map((e: any) => e.id);

/** The whole feed, one event a page. */
async function walk(apiKey: string): Promise<string[]> {
  const out: string[] = [];
  let after: string | undefined;
  for (let i = 0; i < 50; i++) {
    const res = await feed(apiKey, `?limit=1${after ? `&after=${after}` : ""}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(...ids(res));
    after = res.body.nextCursor;
    if (!res.body.hasMore) return out;
  }
  throw new Error("the feed never ended");
}

/** `p`, or a failure if it has not settled within `ms`: what waiting on a lock would look like. */
function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms: blocked on a lock?`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

describe("event feed order", () => {
  it("an event committed after a later one was read comes after the reader's cursor, once; positions count per merchant", async () => {
    // Another merchant's events first: positions are the merchant's own, they do not count these.
    const noise = await svc.newMerchant({ name: "Noise" });
    for (const n of [1, 2, 3]) await commit(input(noise.id, `noise ${n}`));
    expect(ids(await feed(noise.apiKey))).toHaveLength(3);

    const m = await svc.newMerchant({ name: "Out of order" });
    const tx1 = await svc.deps.db.pool.connect();
    try {
      // Transaction 1 records event 1 (taking seq n) and stays open.
      await tx1.query("BEGIN");
      const e1 = await recordEvent(tx1, input(m.id, "first written, committed last"));
      // Event 2 (seq n+1) commits.
      const e2 = await commit(input(m.id, "written second, committed first"));

      // The reader sees event 2 only, and keeps its cursor.
      const first = await feed(m.apiKey);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(ids(first)).toEqual([e2.id]);
      expect(first.body.hasMore).toBe(false);
      const c = first.body.nextCursor as string;
      expect(c).toBe(encodeFeedCursor("1"));

      // Transaction 1 commits: event 1 is not lost behind the cursor, it comes after it.
      await tx1.query("COMMIT");
      const next = await feed(m.apiKey, `?after=${c}`);
      expect(next.status).toBe(200);
      expect(ids(next)).toEqual([e1.id]);
      expect(next.body).toMatchObject({ nextCursor: encodeFeedCursor("2"), hasMore: false });
      expect((await feed(m.apiKey, `?after=${next.body.nextCursor}`)).body).toEqual({
        data: [],
        nextCursor: encodeFeedCursor("2"),
        hasMore: false,
      });

      // A full read: each once, in the order they became readable.
      expect(await walk(m.apiKey)).toEqual([e2.id, e1.id]);
      expect(ids(await feed(m.apiKey))).toEqual([e2.id, e1.id]);

      // The case really was out of order: event 1 holds the lower seq (paging by seq would have skipped it).
      const { rows } = await svc.deps.db.pool.query<{ id: string; seq: string; position: string }>(
        `SELECT id, seq, position FROM event_feed WHERE merchant_id = $1 ORDER BY position`,
        [m.id],
      );
      expect(rows.map((r) => [r.id, r.position])).toEqual([
        [e2.id, "1"],
        [e1.id, "2"],
      ]);
      expect(BigInt(rows[1]!.seq)).toBeLessThan(BigInt(rows[0]!.seq));
      // The end of this merchant's feed is its own count, whatever other merchants wrote.
      expect((await feed(m.apiKey, "?after=now")).body).toEqual({ data: [], nextCursor: encodeFeedCursor("2"), hasMore: false });
    } finally {
      await tx1.query("ROLLBACK").catch(() => {});
      tx1.release();
    }
  });

  it("a held sequencing lock blocks no reader; the purge deletes positioned rows only, by the time they were written", async () => {
    const m = await svc.newMerchant({ name: "Busy" });
    const e1 = await commit(input(m.id, "read before the lock"));
    const read = await feed(m.apiKey);
    expect(ids(read)).toEqual([e1.id]);
    const c1 = read.body.nextCursor as string;

    const holder = await svc.deps.db.pool.connect();
    const old = svc.clock.now() - 400 * DAY_MS;
    // Assigned inside the try below (the lock holder's section).
    let e2!: { id: string };
    let e3!: { id: string };
    try {
      // A sequencer holds the merchant's lock, its transaction still open.
      await holder.query("BEGIN");
      expect(await sequenceIn(holder, m.id)).toEqual({ head: "1", positioned: 0 });
      e2 = await commit(input(m.id, "committed while the lock is held"));
      // An event time 400 days back, written now.
      e3 = await commit(input(m.id, "an old event time", old));

      // Readers answer at once with what is positioned; they do not wait for the lock.
      expect((await within(10_000, feed(m.apiKey, `?after=${c1}`))).body).toEqual({ data: [], nextCursor: c1, hasMore: false });
      expect((await within(10_000, feed(m.apiKey, "?after=now"))).body).toEqual({ data: [], nextCursor: c1, hasMore: false });
      expect(ids(await within(10_000, feed(m.apiKey)))).toEqual([e1.id]);
      // One by id is there already.
      expect((await within(10_000, svc.http("GET", `/v1/events/${e2.id}`, { apiKey: m.apiKey }))).status).toBe(200);
      // Another sequencer does not wait either: it is told the lock is busy.
      expect(await within(10_000, sequenceMerchant(svc.deps.db, m.id))).toBeNull();

      // Event 2 as if written 400 days ago, but not positioned: the processor's pass leaves it (and does not wait).
      await svc.deps.db.pool.query(`UPDATE event_feed SET inserted_at = now() - interval '400 days' WHERE id = $1`, [e2.id]);
      await within(10_000, maintainEventFeed(svc.deps));
      const kept = await svc.deps.db.pool.query(`SELECT position FROM event_feed WHERE id = $1`, [e2.id]);
      expect(kept.rows).toEqual([{ position: null }]);
      await holder.query("COMMIT");
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      holder.release();
    }

    // The lock is free: the next read positions both, after the cursor, in write order; createdAt is the event time.
    const after = await feed(m.apiKey, `?after=${c1}`);
    expect(ids(after)).toEqual([e2.id, e3.id]);
    expect(after.body.data[1].createdAt).toBe(old);
    const c3 = after.body.nextCursor as string;

    // Positioned now, event 2 (written "400 days ago") goes; event 3 (an old event time, written today) stays.
    const pass = await maintainEventFeed(svc.deps);
    expect(pass.purged).toBeGreaterThanOrEqual(1);
    const { rows } = await svc.deps.db.pool.query(`SELECT id FROM event_feed WHERE merchant_id = $1 ORDER BY position`, [m.id]);
    expect(rows.map((r) => r.id)).toEqual([e1.id, e3.id]);
    expect(ids(await feed(m.apiKey))).toEqual([e1.id, e3.id]);
    // Positions are not given again: a new event follows the cursor that was past the purged one.
    const e4 = await commit(input(m.id, "after the purge"));
    const later = await feed(m.apiKey, `?after=${c3}`);
    expect(ids(later)).toEqual([e4.id]);
    expect(later.body.nextCursor).toBe(encodeFeedCursor("4"));
  });
});
