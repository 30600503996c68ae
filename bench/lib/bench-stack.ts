import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Deployments, ChainDeployment } from "../../chains/runtime.js";
import { ANVIL_KEYS, LOCAL_ROLES } from "../../local/accounts.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { guardChild, stopChild } from "../../local/child.js";
import { deployLocalChain } from "../../local/deploy.js";
import { ponderSchemaName, startPonder, type PonderProcess } from "../../local/ponder.js";
import { freePort } from "../../local/ports.js";
import { startEmbeddedPostgres } from "../../local/postgres.js";
import { sleep } from "./stats.js";

// The local stack's pieces (local/*), started one by one so the benchmarks know every process id and can
// start Ponder their own way: embedded Postgres, one Anvil, the contracts, then Ponder(s) and the service.

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");

export type BenchChain = {
  dataDir: string;
  databaseUrl: string;
  /** The postmaster (its backends are its children). */
  postgresPid: number;
  anvil: Anvil;
  chainId: number;
  rpcUrl: string;
  deployment: ChainDeployment;
  /** Environment of the service (API, processors) and of our Ponder, as local/stack.ts builds it. */
  env: Record<string, string>;
  /** Stops whatever was registered, last first. */
  onStop(fn: () => Promise<void>): void;
  stop(): Promise<void>;
};

/**
 * Where a benchmark keeps Postgres, logs and the baseline's project: outside the checkout. Ponder's build runs a
 * Vite dev server whose file watcher covers Ponder's root (for us the checkout, `.data/` included): Postgres's
 * files and the logs changing under it kept that watcher busy, ~45 % of a core of our indexer in a first run.
 */
export const BENCH_DATA_ROOT = path.resolve(process.env.BENCH_DATA_DIR ?? path.join(os.tmpdir(), "chainpay-bench"));

/** Postgres, Anvil (`blockTime` 0: automine) and the deployed contracts, in `<BENCH_DATA_ROOT>/<name>` (wiped). */
export async function startBenchChain(opts: { name: string; chainId: number; blockTime: number }): Promise<BenchChain> {
  const dataDir = path.join(BENCH_DATA_ROOT, opts.name);
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch((e) => console.error("stop:", e));
  };
  try {
    const pg = await startEmbeddedPostgres({ dataDir: path.join(dataDir, "postgres"), persistent: false });
    stops.push(() => pg.stop());
    const postgresPid = Number(fs.readFileSync(path.join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
    const anvil = await startAnvil({ chainId: opts.chainId, blockTime: opts.blockTime });
    stops.push(() => anvil.stop());
    const deployment = await deployLocalChain({ chainId: opts.chainId, rpcUrl: anvil.rpcUrl });
    const deploymentsFile = path.join(dataDir, "deployments.json");
    const deployments: Deployments = { chains: { [String(opts.chainId)]: deployment } };
    fs.writeFileSync(deploymentsFile, JSON.stringify(deployments, null, 2));
    const env: Record<string, string> = {
      DATABASE_URL: pg.url,
      DEPLOYMENTS_FILE: deploymentsFile,
      LOCAL_CHAINS: String(opts.chainId),
      PONDER_VIEWS_SCHEMA: "chain",
      SETTLER_PRIVATE_KEY: ANVIL_KEYS[1],
      FEE_RECIPIENT: LOCAL_ROLES.treasury.address,
      TREASURY_ADDRESS: LOCAL_ROLES.treasury.address,
      [`RPC_URL_${opts.chainId}`]: anvil.rpcUrl,
    };
    return {
      dataDir,
      databaseUrl: pg.url,
      postgresPid,
      anvil,
      chainId: opts.chainId,
      rpcUrl: anvil.rpcUrl,
      deployment,
      env,
      onStop: (fn) => void stops.push(fn),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * Our indexer (ponder.config.ts, src/) on the bench chain. `cache`: Ponder's RPC cache as on a public chain
 * (ponder.config.ts keeps it only for PONDER_CACHE_CHAINS); polling as given for both.
 */
export async function startOurPonder(chain: BenchChain, opts: { cache: boolean; pollingMs: number }): Promise<PonderProcess> {
  const env: Record<string, string> = { ...chain.env, PONDER_POLLING_INTERVAL: String(opts.pollingMs) };
  if (opts.cache) env.PONDER_CACHE_CHAINS = String(chain.chainId);
  // Node options for both Ponders, e.g. "--require ./profile-hook.cjs" to profile them (--cpu-prof is refused in NODE_OPTIONS).
  if (process.env.BENCH_PONDER_NODE_OPTIONS) env.NODE_OPTIONS = process.env.BENCH_PONDER_NODE_OPTIONS;
  const ponder = await startPonder({
    env,
    inheritEnv: false,
    schema: ponderSchemaName(`bench:${chain.dataDir}:${Date.now()}`),
    viewsSchema: env.PONDER_VIEWS_SCHEMA!,
    logFile: path.join(chain.dataDir, "ponder.log"),
  });
  chain.onStop(() => ponder.stop());
  return ponder;
}

export type ServeProcess = { process: ChildProcess; apiUrl: string; stop(): Promise<void> };

/**
 * The API and every processor in a process of their own (`npm run serve` with ROLES=api,processors); `opts.env`
 * adds to or overrides the service's environment (ROLES, API_WORKERS...).
 */
export async function startServe(chain: BenchChain, opts: { env?: Record<string, string>; log?: string } = {}): Promise<ServeProcess> {
  const port = await freePort();
  const logFile = path.join(chain.dataDir, opts.log ?? "serve.log");
  const out = fs.openSync(logFile, "a");
  // Node flags for the service, e.g. BENCH_SERVE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeArgs = process.env.BENCH_SERVE_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", path.join(ROOT, "scripts", "serve.ts")], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // The service's tuning knobs, when the benchmark is run with them (e.g. SYNC_PRUNE_INTERVAL_MS).
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(SYNC_PRUNE_|DETECTOR_|SETTLER_)[A-Z_]+$/.test(k))),
      ...chain.env,
      ROLES: "api,processors",
      HASH_SECRET: randomBytes(32).toString("hex"),
      SECRET_KEY: randomBytes(32).toString("hex"),
      PORT: String(port),
      HOST: "127.0.0.1",
      NODE_ENV: "production",
      ...opts.env,
    },
    stdio: ["ignore", out, out],
  });
  guardChild(child);
  const stop = () => stopChild(child, 35_000);
  chain.onStop(stop);
  const apiUrl = `http://127.0.0.1:${port}/api`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited with code ${child.exitCode} (see ${logFile})`);
    // Any answer will do: /health says 503 until the indexer is ready.
    if (await fetch(`${apiUrl}/health`).catch(() => null)) break;
    if (Date.now() > deadline) throw new Error(`serve not answering on ${apiUrl} (see ${logFile})`);
    await sleep(200);
  }
  return { process: child, apiUrl, stop };
}

const t00 = Date.now();
/** A progress line on stderr, stamped with the seconds since the benchmark started (stdout keeps the figures). */
export const benchLog = (m: string) => console.error(`[${((Date.now() - t00) / 1000).toFixed(1).padStart(6)} s] ${m}`);

/** Runs a benchmark on its chain, stops everything it started whatever happens, and exits 0, or 1 on an error. */
export async function runBench(chain: BenchChain, run: () => Promise<void>): Promise<never> {
  let exitCode = 0;
  try {
    await run();
  } catch (e) {
    console.error(e);
    exitCode = 1;
  } finally {
    benchLog("stopping");
    await chain.stop();
  }
  process.exit(exitCode);
}
