// Fault-injection runs (`npm run test:chaos`, and the small scale at the end of `npm test`): each file under
// test/chaos starts and stops its own stack (Postgres, Anvil, supervised service processes), so there is no
// globalSetup and files run one after another. CHAOS_SCALE=full: 300 payments; CHAOS_SEED replays a run.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/chaos/**/*.test.ts"],
    // In `npm test` the re-org file runs with the stack project (vitest.config.ts); CHAOS_SCALE=full runs it here.
    exclude: ["node_modules/**", ".data/**", ".scratch/**", ...(process.env.CHAOS_SCALE === "full" ? [] : ["test/chaos/reorg.test.ts"])],
    reporters: ["default", "./test/setup/summary-reporter.ts"],
    pool: "forks",
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 60 * 60_000,
    hookTimeout: 10 * 60_000,
    teardownTimeout: 120_000,
  },
});
