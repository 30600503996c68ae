import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { isAlive } from "../../local/child.js";
import { freePort } from "../../local/ports.js";
import { startStack } from "../../local/stack.js";
import { stopStalePostmaster } from "../../local/postgres.js";
import { ensureChromium } from "./chromium.js";
import { monitorIndexerLag } from "./indexer-lag.js";

declare module "vitest" {
  export interface ProvidedContext {
    stackEnv: Record<string, string>;
  }
}

const ROOT = path.resolve(".data/test");

/** Runs killed with -9 leave a postmaster and a data dir behind: clean those up (never a live run's). */
async function cleanStaleRuns() {
  if (!fs.existsSync(ROOT)) return;
  for (const name of fs.readdirSync(ROOT)) {
    const pid = Number(/^run-(\d+)$/.exec(name)?.[1]);
    if (!pid || isAlive(pid)) continue;
    await stopStalePostmaster(path.join(ROOT, name, "postgres"));
    fs.rmSync(path.join(ROOT, name), { recursive: true, force: true });
  }
}

/** Starts the local stack once per run on free ports: embedded Postgres, Anvil 137 + 777177, contracts, Ponder. */
export default async function setup(project: TestProject) {
  const t0 = Date.now();
  await cleanStaleRuns();
  // One directory per run, so runs side by side (several checkouts' worth of work) never share state.
  const dataDir = path.join(ROOT, `run-${process.pid}`);
  // The browser tests' Chromium, installed while the stack starts when it is missing.
  const chromium = ensureChromium();
  chromium.catch(() => {});
  // The indexer's inspector, so a stall can be profiled (test/setup/indexer-lag.ts).
  const inspectPort = await freePort();
  process.env.PONDER_INSPECT_PORT = String(inspectPort);
  const stack = await startStack({
    dataDir,
    fresh: true,
    persistent: false,
    chainIds: [137, 777177],
    // 1 s blocks: Ponder spends ~125 ms of CPU per block, and 2 cores are shared with the tests.
    blockTime: 1,
    databaseUrl: process.env.TEST_DATABASE_URL,
  });
  delete process.env.PONDER_INSPECT_PORT; // the test files' own indexers are not inspected
  await stack.ponder!.waitReady(180_000);
  await chromium.catch(async (err) => {
    await stack.stop();
    throw err;
  });
  // The stack (Postgres, Anvil, Ponder) keeps its CPU priority; the test workers forked from here on, and all
  // they start, run at a lower one. On 2 cores the tests' own load otherwise starves Ponder, and indexing falls
  // minutes behind on a slow machine (as in production, where the indexer does not share its cores with load).
  lowerOwnPriority();
  const lag = monitorIndexerLag(stack.env, path.join(dataDir, "indexer-lag.log"), inspectPort);
  console.log(`[global-setup] stack ready in ${Date.now() - t0} ms (ponder log: ${path.relative(process.cwd(), dataDir)}/ponder.log)`);
  project.provide("stackEnv", stack.env);
  return async () => {
    console.log(`[global-setup] ${await lag.stop()}`);
    await stack.stop();
    keepLogs(dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}

/**
 * The indexer's log and its lag log outlive their run (those of the last five runs are kept in .data/test-logs): a
 * stall is read after the fact.
 */
function keepLogs(dataDir: string) {
  const logs = path.resolve(".data/test-logs");
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  fs.mkdirSync(logs, { recursive: true });
  for (const f of fs.readdirSync(dataDir).filter((f) => f.endsWith(".cpuprofile")))
    fs.copyFileSync(path.join(dataDir, f), path.join(logs, f));
  for (const name of ["ponder", "indexer-lag"]) {
    try {
      fs.copyFileSync(path.join(dataDir, `${name}.log`), path.join(logs, `${name}-${stamp}.log`));
    } catch {
      // No such log (the stack never started Ponder): nothing to keep.
    }
    const runs = fs.readdirSync(logs).filter((f) => f.startsWith(`${name}-`));
    for (const old of runs.sort().reverse().slice(5)) fs.rmSync(path.join(logs, old), { force: true });
  }
}

/** Niceness 10 for this process's main thread: the processes it forks from now on inherit it. */
function lowerOwnPriority() {
  try {
    os.setPriority(0, Math.max(os.getPriority(0), 10));
  } catch {
    // Not allowed here: the run goes on at the same priority.
  }
}
