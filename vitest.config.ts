import { defineConfig } from "vitest/config";

// Two projects (docs/testing.md):
// - unit: tests beside the code they test (core/, chains/, modules/, api/, ...), pure: no database, chain or indexer.
//   `npx vitest run --project unit` runs in seconds.
// - stack: test/**, on one Postgres, one Anvil per chain id and one Ponder for the whole run (test/setup/global-setup.ts);
//   each test file gets its own app schema. test/chaos starts its own stacks: vitest.chaos.config.ts runs it after.
const EXCLUDE = ["node_modules/**", ".data/**", ".scratch/**"];

export default defineConfig({
  test: {
    reporters: ["default", "./test/setup/summary-reporter.ts"],
    pool: "forks",
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["**/*.test.ts"],
          exclude: [...EXCLUDE, "test/**"],
          testTimeout: 10_000,
        },
      },
      {
        extends: true,
        test: {
          name: "stack",
          globalSetup: ["test/setup/global-setup.ts"],
          // A worker keeps its modules from one file to the next: the service's import graph is loaded twice per
          // run, not once per file (about 80 s of a run). Each file still has its own schema, deps and servers.
          isolate: false,
          // test/chaos/reorg.test.ts starts a stack of its own but mines every block itself (nothing timed): it runs
          // here, beside the other files, rather than alone after them.
          include: ["test/**/*.test.ts"],
          exclude: [...EXCLUDE, "test/chaos/!(reorg).test.ts", "test/chaos/harness/**"],
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
