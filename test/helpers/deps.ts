import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import type { AppDeps } from "../../core/deps.js";
import { migrate } from "../../db/migrate.js";
import { createDeps } from "../../app/deps.js";

export type TestDeps = AppDeps & { env: Record<string, string>; cleanup(): Promise<void> };

/** Service dependencies on the run's stack, in a fresh app schema of this test file's own. */
export async function createTestDeps(opts: { now?: () => number; env?: Record<string, string> } = {}): Promise<TestDeps> {
  const schema = `app_t${randomBytes(5).toString("hex")}`;
  const env = { ...inject("stackEnv"), APP_SCHEMA: schema, WEBHOOK_ALLOW_PRIVATE: "true", ...opts.env };
  const deps = createDeps({ env, now: opts.now });
  await migrate(deps.db);
  return {
    ...deps,
    env,
    async cleanup() {
      await deps.db.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await deps.db.close();
    },
  };
}
