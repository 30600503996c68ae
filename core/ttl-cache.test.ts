import { describe, expect, it } from "vitest";
import { scopedCache, TtlCache } from "./ttl-cache.js";

describe("TtlCache", () => {
  it("loads once for concurrent callers and reuses the value within the TTL", async () => {
    const cache = new TtlCache<{ v: number }>({ max: 10, ttlMs: 1_000 });
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const load = async () => {
      loads++;
      await gate;
      return { v: loads };
    };
    const all = Promise.all([cache.get("k", load), cache.get("k", load), cache.get("k", load)]);
    release();
    expect(await all).toEqual([{ v: 1 }, { v: 1 }, { v: 1 }]);
    expect(await cache.get("k", load)).toEqual({ v: 1 });
    expect(loads).toBe(1);
  });

  it("never returns a value older than the TTL: the next caller waits for a fresh load", async () => {
    const cache = new TtlCache<{ v: number }>({ max: 10, ttlMs: 200 });
    let n = 0;
    const load = async () => ({ v: ++n });
    const t0 = performance.now();
    expect(await cache.get("k", load)).toEqual({ v: 1 });
    const reused = await cache.get("k", load);
    if (performance.now() - t0 < 200) expect(reused).toEqual({ v: 1 });
    await new Promise((r) => setTimeout(r, 250));
    expect(await cache.get("k", load)).toEqual({ v: n });
    expect(n).toBeGreaterThan(1);
  });

  it("does not cache a failed load or an undefined one", async () => {
    const cache = new TtlCache<{ v: number }>({ max: 10, ttlMs: 60_000 });
    await expect(cache.get("k", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await cache.get("k", async () => undefined)).toBeUndefined();
    expect(await cache.get("k", async () => ({ v: 3 }))).toEqual({ v: 3 });
  });

  it("with a TTL of 0 loads every time", async () => {
    const cache = new TtlCache<{ v: number }>({ max: 10, ttlMs: 0 });
    let n = 0;
    await cache.get("k", async () => ({ v: ++n }));
    await cache.get("k", async () => ({ v: ++n }));
    expect(n).toBe(2);
  });

  it("keeps at most `max` entries", async () => {
    const cache = new TtlCache<{ v: number }>({ max: 2, ttlMs: 60_000 });
    let n = 0;
    const load = async () => ({ v: ++n });
    await cache.get("a", load);
    await cache.get("b", load);
    await cache.get("c", load);
    expect(await cache.get("a", load)).toEqual({ v: 4 });
  });
});

describe("scopedCache", () => {
  it("gives each scope its own cache", async () => {
    const caches = scopedCache<{ v: string }>(10);
    const a = {};
    const b = {};
    await caches(a, 60_000).get("k", async () => ({ v: "a" }));
    expect(await caches(b, 60_000).get("k", async () => ({ v: "b" }))).toEqual({ v: "b" });
    expect(await caches(a, 60_000).get("k", async () => ({ v: "x" }))).toEqual({ v: "a" });
  });
});
