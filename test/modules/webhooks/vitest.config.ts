// Webhook tests alone, on an embedded Postgres only (no Anvil, no Ponder: webhooks need neither):
//   npx vitest run --config test/modules/webhooks/vitest.config.ts
// The root config (`npx vitest run test/modules/webhooks`) runs the same files on the full stack.
import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: path.resolve(import.meta.dirname, "../../.."),
    include: ["test/modules/webhooks/**/*.test.ts"],
    globalSetup: ["test/modules/webhooks/helpers/postgres-only-setup.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
