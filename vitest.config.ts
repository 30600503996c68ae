import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // One Postgres, one Anvil per chain id and one Ponder for the whole run; each test file gets its own app schema.
    globalSetup: ["test/setup/global-setup.ts"],
    reporters: ["default", "./test/setup/summary-reporter.ts"],
    include: ["**/*.test.ts"],
    // test/chaos: each file starts its own stack; run after this suite by vitest.chaos.config.ts.
    exclude: ["node_modules/**", ".data/**", ".scratch/**", "test/chaos/**"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
