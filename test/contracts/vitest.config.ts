// Contract tests alone, without the root config's global stack (Postgres, Ponder):
//   npx vitest run --config test/contracts/vitest.config.ts
// Each contract test file starts and stops its own Anvil.
import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: path.resolve(import.meta.dirname, "../.."),
    include: ["test/contracts/**/*.test.ts", "chains/deposit-address.test.ts", "modules/settlement/batch-size.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
