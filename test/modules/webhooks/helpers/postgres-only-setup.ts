import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../../../../local/postgres.js";

/**
 * Global setup of test/modules/webhooks/vitest.config.ts: one embedded Postgres (in a data dir of this run's
 * own, so concurrent runs do not collide), provided as the `stackEnv` createTestDeps reads.
 */
export default async function setup(project: TestProject) {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  const dataDir = path.resolve(`.data/webhooks-test/run-${process.pid}`);
  const pg = databaseUrl
    ? undefined
    : await startEmbeddedPostgres({ dataDir: path.join(dataDir, "postgres"), persistent: false, fresh: true });
  // A SECRET_KEY per run, as local/stack.ts gives the full stack's tests.
  project.provide("stackEnv", { DATABASE_URL: databaseUrl ?? pg!.url, SECRET_KEY: randomBytes(32).toString("hex") });
  return async () => {
    await pg?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}
