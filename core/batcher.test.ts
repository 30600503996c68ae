import { describe, expect, it } from "vitest";
import { batcher, type BatchOptions } from "./batcher.js";

// The batcher alone, over a plain statement of its own (test/modules/payments/create-batch.test.ts runs the real ones).

/** An error of the kind a batch may be split for (as a Postgres data error), or not (as a lost connection). */
class Refused extends Error {
  constructor(
    message: string,
    readonly splittable: boolean,
  ) {
    super(message);
  }
}

/** A statement that records each batch and each item run alone, answers n * 10 for item n, refuses a batch holding a bad item. */
function work(opts: { bad?: (n: number) => boolean; gate?: Promise<void>; splittable?: boolean } = {}) {
  const batches: number[][] = [];
  const alone: number[] = [];
  const fail = (items: number[]) => {
    if (items.some((n) => opts.bad?.(n))) throw new Refused(`bad item in ${items.join(",")}`, opts.splittable ?? true);
  };
  const options: BatchOptions<number, number> = {
    name: "test",
    run: async (items) => {
      batches.push([...items]);
      await opts.gate;
      fail(items);
      return items.map((n) => n * 10);
    },
    runOne: async (n) => {
      alone.push(n);
      await opts.gate;
      fail([n]);
      return n * 10;
    },
    splittable: (e) => e instanceof Refused && e.splittable,
    split: "halves",
    full: () => new Error("queue full"),
  };
  return { batches, alone, options };
}

const tick = () => new Promise((r) => setImmediate(r));
const outcome = (r: PromiseSettledResult<number>) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message);

describe("batcher", () => {
  it("runs the calls of one turn as one batch, each caller getting its own item's result", async () => {
    const w = work();
    const b = batcher(w.options);
    expect(await Promise.all([1, 2, 3, 4].map((n) => b(n)))).toEqual([10, 20, 30, 40]);
    expect(w.batches).toEqual([[1, 2, 3, 4]]);
    expect(b.stats()).toMatchObject({ batches: 1, items: 4, largest: 4, statements: 1, alone: 0, fallbacks: 0 });
  });

  it("a call alone runs runOne, the statement of one item", async () => {
    const w = work();
    const b = batcher(w.options);
    expect(await b(7)).toBe(70);
    expect(w.batches).toEqual([]);
    expect(w.alone).toEqual([7]);
    expect(b.stats()).toMatchObject({ batches: 1, statements: 0, alone: 1 });
  });

  it("collects the calls made while a batch runs into the next batch (one batch in flight)", async () => {
    let open!: () => void;
    const w = work({ gate: new Promise<void>((r) => (open = r)) });
    const b = batcher(w.options);
    const first = [b(1), b(2)];
    await tick(); // the first batch is running, waiting on the gate
    const later = [b(3), b(4), b(5)];
    await tick();
    expect(w.batches).toEqual([[1, 2]]);
    open();
    expect(await Promise.all([...first, ...later])).toEqual([10, 20, 30, 40, 50]);
    expect(w.batches).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
  });

  it("never makes a batch larger than maxSize", async () => {
    const w = work();
    const b = batcher({ ...w.options, maxSize: 3, maxInFlight: 2 });
    expect(await Promise.all(Array.from({ length: 8 }, (_, i) => b(i)))).toEqual([0, 10, 20, 30, 40, 50, 60, 70]);
    expect([...w.batches, ...w.alone.map((n) => [n])].every((x) => x.length <= 3)).toBe(true);
    expect([...w.batches.flat(), ...w.alone].sort((a, c) => a - c)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(b.stats().largest).toBe(3);
  });

  it("a failed batch runs again in halves, in order: the bad item fails alone with its own error, in at most 1 + 2·log2(n) statements", async () => {
    const w = work({ bad: (n) => n === 3 });
    const b = batcher(w.options);
    const out = await Promise.allSettled([1, 2, 3, 4, 5, 6, 7, 8].map((n) => b(n)));
    expect(out.map(outcome)).toEqual([10, 20, "bad item in 3", 40, 50, 60, 70, 80]);
    expect(w.batches).toEqual([
      [1, 2, 3, 4, 5, 6, 7, 8],
      [1, 2, 3, 4],
      [1, 2],
      [3, 4],
      [5, 6, 7, 8],
    ]);
    expect(w.alone).toEqual([3, 4]);
    expect(b.stats()).toMatchObject({ batches: 1, statements: 5, alone: 2, fallbacks: 1 });
  });

  it("split `each`: every item of a failed batch runs alone, all at once", async () => {
    const w = work({ bad: (n) => n === 2 });
    const b = batcher({ ...w.options, split: "each" });
    const out = await Promise.allSettled([1, 2, 3].map((n) => b(n)));
    expect(out.map(outcome)).toEqual([10, "bad item in 2", 30]);
    expect(w.batches).toEqual([[1, 2, 3]]);
    expect(w.alone).toEqual([1, 2, 3]);
  });

  it("an error that may have committed is every caller's as it is: nothing runs again", async () => {
    const w = work({ bad: (n) => n === 2, splittable: false });
    const b = batcher(w.options);
    const out = await Promise.allSettled([1, 2, 3].map((n) => b(n)));
    expect(out.map(outcome)).toEqual(["bad item in 1,2,3", "bad item in 1,2,3", "bad item in 1,2,3"]);
    expect(w.alone).toEqual([]);
    expect(b.stats().fallbacks).toBe(0);
  });

  it("a batch answering with the wrong number of results fails every caller and is not run again", async () => {
    const alone: number[] = [];
    const b = batcher({
      ...work().options,
      run: async () => [1],
      runOne: async (n: number) => {
        alone.push(n);
        return n;
      },
    });
    const out = await Promise.allSettled([b(1), b(2)]);
    expect(out.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(alone).toEqual([]);
  });

  it("beyond maxQueue waiting items, a call is refused at once with full()", async () => {
    let open!: () => void;
    const w = work({ gate: new Promise<void>((r) => (open = r)) });
    const b = batcher({ ...w.options, maxSize: 2, maxQueue: 3 });
    const running = [b(1), b(2)];
    await tick(); // [1, 2] runs; the queue is empty
    const waiting = [b(3), b(4), b(5)];
    await expect(b(6)).rejects.toThrow("queue full");
    expect(b.stats().overflows).toBe(1);
    open();
    expect(await Promise.all([...running, ...waiting])).toEqual([10, 20, 30, 40, 50]);
  });

  it("with keys, an item waits while a running batch has one of its keys; others go ahead", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const w = work();
    const started: number[][] = [];
    const b = batcher({
      ...w.options,
      maxInFlight: 2,
      keys: (n: number) => [`k${n % 10}`],
      run: async (items) => {
        started.push(items);
        if (items.includes(1)) await gate;
        return items.map((n) => n * 10);
      },
    });
    const first = [b(1), b(2)];
    await tick(); // [1, 2] runs, holding k1 and k2
    const later = [b(11), b(3), b(4)];
    await tick(); // 11 (k1) waits; [3, 4] runs beside
    expect(started).toEqual([
      [1, 2],
      [3, 4],
    ]);
    open();
    expect(await Promise.all([...first, ...later])).toEqual([10, 20, 110, 30, 40]);
    expect(w.alone).toEqual([11]);
  });

  it("keeps working after a failure: later calls are batched again", async () => {
    const w = work({ bad: (n) => n === 2 });
    const b = batcher(w.options);
    await Promise.allSettled([b(1), b(2)]);
    expect(await Promise.all([b(3), b(4)])).toEqual([30, 40]);
    expect(w.batches.at(-1)).toEqual([3, 4]);
  });
});
