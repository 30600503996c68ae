import { describe, expect, it } from "vitest";
import { EARLY_KILL, FAULT_WINDOW, planFaults } from "./faults.js";
import { createRng } from "./rng.js";
import { CHAOS_SCALES } from "./scale.js";

// Pure planning, no stack. Seed 3261579040 once failed: the Postgres restart and the RPC outage, placed first,
// left no room for the early processors kill's narrow range. 3,000 seeds with CHAOS_SCALE=full, 500 in `npm test`.
const SEEDS = process.env.CHAOS_SCALE === "full" ? 3000 : 500;
describe("planFaults", () => {
  for (const [name, scale] of Object.entries(CHAOS_SCALES))
    it(`plans every seed at ${name} scale: all faults, ${scale.gapMs} ms apart, the first processors kill in 20–35 %`, () => {
      const seeds = [3261579040, ...Array.from({ length: SEEDS }, (_, i) => (i * 2654435761) >>> 0)];
      for (const seed of seeds) {
        const plan = planFaults(createRng(seed).fork("faults"), {
          windowMs: scale.windowMs,
          kills: scale.kills,
          minGapMs: scale.gapMs,
        });
        const kills = (t: string) => plan.filter((f) => f.kind === "kill" && f.target === t);
        expect(kills("indexer")).toHaveLength(scale.kills.indexer);
        expect(kills("processors")).toHaveLength(scale.kills.processors);
        expect(kills("api")).toHaveLength(scale.kills.api);
        expect(plan.filter((f) => f.kind === "postgres-restart")).toHaveLength(1);
        expect(plan.filter((f) => f.kind === "rpc-outage")).toHaveLength(1);
        for (let i = 1; i < plan.length; i++) expect(plan[i]!.atMs - plan[i - 1]!.atMs).toBeGreaterThanOrEqual(scale.gapMs);
        for (const f of plan) {
          expect(f.atMs).toBeGreaterThanOrEqual(Math.round(scale.windowMs * FAULT_WINDOW.from));
          expect(f.atMs).toBeLessThanOrEqual(Math.round(scale.windowMs * FAULT_WINDOW.to));
        }
        const early = kills("processors").filter(
          (f) => f.atMs >= Math.round(scale.windowMs * EARLY_KILL.from) && f.atMs <= Math.round(scale.windowMs * EARLY_KILL.to),
        );
        expect(early.length).toBeGreaterThanOrEqual(1);
      }
    });
});
