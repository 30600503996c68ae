import { afterEach, describe, expect, it } from "vitest";
import type { AppDeps } from "../core/deps.js";
import { defineProcessor, startProcessors } from "./runner.js";

// The runner's loops without a database: a pool that answers every heartbeat with nothing.
const deps = { db: { pool: { query: async () => ({ rows: [] }) } }, config: {} } as unknown as AppDeps;
const warnings: Error[] = [];
const onWarning = (w: Error) => void warnings.push(w);
afterEach(() => {
  process.off("warning", onWarning);
  warnings.length = 0;
});

describe("startProcessors", () => {
  it("sleeps any number of loops at once without a listener each on one AbortSignal, and stops them all at once", async () => {
    process.on("warning", onWarning);
    // More loops than Node's 10 listeners an EventTarget may hold before MaxListenersExceededWarning (npm start runs 12).
    const passes = new Map<string, number>();
    const processors = Array.from({ length: 25 }, (_, i) =>
      defineProcessor({ name: `p${i}`, intervalMs: 60_000, run: async () => void passes.set(`p${i}`, (passes.get(`p${i}`) ?? 0) + 1) }),
    );
    const runner = startProcessors(deps, processors, () => {});
    await new Promise((r) => setTimeout(r, 50));
    expect([...passes.values()]).toEqual(Array(25).fill(1));
    const started = Date.now();
    await runner.stop();
    // Every loop was asleep for a minute: stop() woke them, it did not wait them out.
    expect(Date.now() - started).toBeLessThan(1000);
    await new Promise((r) => setImmediate(r));
    expect(warnings.map((w) => w.name)).not.toContain("MaxListenersExceededWarning");
  });
});
