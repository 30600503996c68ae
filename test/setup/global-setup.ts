import path from "node:path";
import type { TestProject } from "vitest/node";
import { startStack } from "../../local/stack.js";

declare module "vitest" {
  export interface ProvidedContext {
    stackEnv: Record<string, string>;
  }
}

/** Starts the local stack once per run on free ports: embedded Postgres, Anvil 137 + 777177, contracts, Ponder. */
export default async function setup(project: TestProject) {
  const t0 = Date.now();
  const stack = await startStack({
    dataDir: path.resolve(".data/test"),
    fresh: true,
    persistent: false,
    chainIds: [137, 777177],
    blockTime: 0.5,
    databaseUrl: process.env.TEST_DATABASE_URL,
  });
  await stack.ponder!.waitReady(180_000);
  console.log(`[global-setup] stack ready in ${Date.now() - t0} ms (ponder log: .data/test/ponder.log)`);
  project.provide("stackEnv", stack.env);
  return async () => {
    await stack.stop();
  };
}
