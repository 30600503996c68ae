import { logger } from "./log.js";
import { countBatchFallback, countBatchOverflow } from "./metrics.js";

/**
 * Group commit: calls that arrive while a batch is running, or in the same turn of the event loop when none is, are
 * collected (up to `maxSize`) and run together by `run`, e.g. as one SQL statement: one round trip to Postgres, and
 * one commit, for many requests. Each caller gets its own item's result. A batch of one runs `runOne`, the statement
 * of an item alone: without concurrency nothing changes.
 *
 * A failed batch whose error `splittable` accepts (nothing of it was committed) runs again in parts, so a bad item
 * fails alone with its own error: `halves` in order, recursively (about 2·log2(n) statements for one bad item among
 * n; order kept for statements whose items depend on earlier ones), or `each` item alone, all at once. Any other
 * error is every caller's as it is: the batch may have committed, and running it again would do it twice.
 *
 * At most `maxInFlight` batches run at once. Waiting for the running batch is what fills the next one. Beyond
 * `maxQueue` waiting items a call is refused at once with `full()`: a stuck database does not grow the queue without
 * end.
 *
 * @example
 * const insert = batcher<Row, void>({ name: "rows", run: (rows) => insertRows(db, rows), runOne: (r) => insertRow(db, r),
 *   splittable: isSplittable, split: "halves", full: () => new Unavailable("Busy") });
 * await insert(row); // alongside the other rows of this turn
 */
export type BatchOptions<I, O> = {
  /** Names the batcher in logs and metrics (`statement`). */
  name: string;
  /** Runs a batch of two or more: one result per item, in the items' order. */
  run(items: I[]): Promise<O[]>;
  /** Runs one item alone (a batch of one; the parts of a failed batch). */
  runOne(item: I): Promise<O>;
  /** Whether a batch that failed with this error may run again in parts. */
  splittable(e: unknown): boolean;
  split: "halves" | "each";
  /** The error of a call refused because `maxQueue` items are waiting. */
  full(): Error;
  /** Largest batch (default 64). */
  maxSize?: number;
  /** Batches running at once (default 1). */
  maxInFlight?: number;
  /** Most items waiting (default 32 batches). */
  maxQueue?: number;
  /**
   * What an item's statement locks or creates (e.g. rate-limit buckets): an item waits while a running batch has one
   * of its keys, so two batches of this process never race to create the same row.
   */
  keys?(item: I): readonly string[];
};

export type BatchStats = {
  /** Batches formed, items submitted, the largest batch. */
  batches: number;
  items: number;
  largest: number;
  /** Statements run: `run` (two items or more), `runOne` (one). */
  statements: number;
  alone: number;
  /** Batches that failed and ran again in parts; calls refused because the queue was full. */
  fallbacks: number;
  overflows: number;
};

export type Batcher<I, O> = ((item: I) => Promise<O>) & {
  /** Counters since creation (tests). */
  stats(): BatchStats;
};

/** The message of a call refused because its batcher's queue is full (503: the database is stuck or far behind). */
export const QUEUE_FULL = "Service unavailable, try again later";

type Entry<I, O> = { item: I; keys: readonly string[]; resolve(o: O): void; reject(e: unknown): void };

export function batcher<I, O>(opts: BatchOptions<I, O>): Batcher<I, O> {
  const maxSize = Math.max(1, opts.maxSize ?? 64);
  const maxInFlight = Math.max(1, opts.maxInFlight ?? 1);
  const maxQueue = opts.maxQueue ?? maxSize * 32;
  const stats: BatchStats = { batches: 0, items: 0, largest: 0, statements: 0, alone: 0, fallbacks: 0, overflows: 0 };
  const busy = new Map<string, number>();
  let queue: Entry<I, O>[] = [];
  let inFlight = 0;
  let scheduled = false;

  // setImmediate: after the I/O callbacks of this turn, so requests read together are batched together.
  const kick = () => {
    if (scheduled || inFlight >= maxInFlight || queue.length === 0) return;
    scheduled = true;
    setImmediate(flush);
  };

  /** The next batch: waiting items in order, but none with a key a running batch has. */
  function next(): Entry<I, O>[] {
    const batch: Entry<I, O>[] = [];
    const rest: Entry<I, O>[] = [];
    for (const e of queue) (batch.length < maxSize && !e.keys.some((k) => busy.has(k)) ? batch : rest).push(e);
    queue = rest;
    return batch;
  }

  const hold = (batch: Entry<I, O>[], by: number) => {
    for (const k of batch.flatMap((e) => e.keys)) {
      const n = (busy.get(k) ?? 0) + by;
      if (n > 0) busy.set(k, n);
      else busy.delete(k);
    }
  };

  function flush() {
    scheduled = false;
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = next();
      if (batch.length === 0) return;
      inFlight++;
      hold(batch, 1);
      stats.batches++;
      stats.largest = Math.max(stats.largest, batch.length);
      void execute(batch, true).finally(() => {
        inFlight--;
        hold(batch, -1);
        kick();
      });
    }
  }

  const alone = async (e: Entry<I, O>) => {
    stats.alone++;
    try {
      e.resolve(await opts.runOne(e.item));
    } catch (err) {
      e.reject(err);
    }
  };

  // Settles every entry of `batch`: one statement, or on a splittable failure its parts.
  async function execute(batch: Entry<I, O>[], top: boolean): Promise<void> {
    if (batch.length === 1) return alone(batch[0]!);
    let results: O[];
    stats.statements++;
    try {
      results = await opts.run(batch.map((e) => e.item));
    } catch (err) {
      if (!opts.splittable(err)) return batch.forEach((e) => e.reject(err));
      if (top) {
        stats.fallbacks++;
        countBatchFallback(opts.name);
        logger("batch").warn({ err, statement: opts.name, size: batch.length }, "batch failed; its items run again in parts");
      }
      if (opts.split === "each") return void (await Promise.all(batch.map(alone)));
      const half = Math.ceil(batch.length / 2);
      await execute(batch.slice(0, half), false);
      return execute(batch.slice(half), false);
    }
    // Committed, so never run again: a wrong count is every caller's error.
    if (results.length !== batch.length) {
      const err = new Error(`${opts.name}: batch of ${batch.length} gave ${results.length} results`);
      return batch.forEach((e) => e.reject(err));
    }
    batch.forEach((e, i) => e.resolve(results[i]!));
  }

  const submit = (item: I) =>
    new Promise<O>((resolve, reject) => {
      stats.items++;
      if (queue.length >= maxQueue) {
        stats.overflows++;
        countBatchOverflow(opts.name);
        return reject(opts.full());
      }
      queue.push({ item, keys: opts.keys?.(item) ?? [], resolve, reject });
      kick();
    });
  return Object.assign(submit, { stats: () => ({ ...stats }) });
}
