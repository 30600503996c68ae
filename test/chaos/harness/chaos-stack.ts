import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { createPublicClient, http } from "viem";
import { isAlive } from "../../../local/child.js";
import { ponderEnv, ponderSchemaName } from "../../../local/ponder.js";
import { freePort } from "../../../local/ports.js";
import { startEmbeddedPostgres, stopStalePostmaster, type LocalPostgres } from "../../../local/postgres.js";
import { startStack, type Stack } from "../../../local/stack.js";
import { startRpcProxy, type RpcProxy } from "./rpc-proxy.js";
import { Supervised } from "./supervisor.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const RUNS = path.join(ROOT, ".data", "chaos");

export type ChaosStack = {
  chainId: number;
  dataDir: string;
  /** Anvil itself (payers and checks); the services only know the proxy. */
  anvilUrl: string;
  apiUrl: string;
  /** Environment of the service processes (DATABASE_URL, the proxy's RPC URL, keys...). */
  serviceEnv: Record<string, string>;
  proxy: RpcProxy;
  indexer: Supervised;
  processors: Supervised;
  api: Supervised;
  procs(): Supervised[];
  /** Stops Postgres (fast shutdown), keeps it down `downMs`, starts it again on the same port and data dir. */
  restartPostgres(downMs: number): Promise<void>;
  /** Stops everything and deletes the run's data; `keepLogsIn` first copies the processes' logs there. */
  stop(keepLogsIn?: string): Promise<void>;
};

/** Runs killed with -9 leave a postmaster and a data dir behind: clean those (never a live run's). */
async function cleanStaleRuns() {
  if (!fs.existsSync(RUNS)) return;
  for (const name of fs.readdirSync(RUNS)) {
    const pid = Number(/^run-(\d+)$/.exec(name)?.[1]);
    if (!pid || isAlive(pid)) continue;
    await stopStalePostmaster(path.join(RUNS, name, "postgres"));
    fs.rmSync(path.join(RUNS, name), { recursive: true, force: true });
  }
}

/**
 * Postgres, one Anvil chain and the contracts, an RPC proxy, and the three service processes under
 * supervision: Ponder, `serve.ts` with ROLES=api, `serve.ts` with ROLES=processors.
 */
export async function startChaosStack(opts: {
  chainId: number;
  blockTime: number;
  /** CA the processors trust for webhook receivers (NODE_EXTRA_CA_CERTS). */
  receiverCa: string;
  extraEnv?: Record<string, string>;
  log: (msg: string) => void;
}): Promise<ChaosStack> {
  await cleanStaleRuns();
  const dataDir = path.join(RUNS, `run-${process.pid}`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  const pgDir = path.join(dataDir, "postgres");
  const pgPort = await freePort();
  // Persistent: the restart must find its data. The second instance is not, so the final stop removes it.
  let pg: LocalPostgres = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, persistent: true, fresh: true });
  const cleanups: (() => Promise<void>)[] = [() => pg.stop()];
  let stack: Stack | undefined;
  const procs: Supervised[] = [];
  let proxy: RpcProxy | undefined;
  const stopAll = async (keepLogsIn?: string) => {
    for (const p of procs.reverse()) await p.stop().catch(() => {});
    if (keepLogsIn) {
      fs.mkdirSync(keepLogsIn, { recursive: true });
      for (const f of fs.readdirSync(dataDir).filter((x) => x.endsWith(".log")))
        fs.copyFileSync(path.join(dataDir, f), path.join(keepLogsIn, f));
    }
    await proxy?.close().catch(() => {});
    await stack?.stop().catch(() => {});
    for (const c of cleanups.reverse()) await c().catch(() => {});
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    stack = await startStack({
      dataDir,
      databaseUrl: pg.url,
      chainIds: [opts.chainId],
      blockTime: opts.blockTime,
      ponder: false,
      persistent: false,
      log: opts.log,
    });
    const anvilUrl = stack.chains[0]!.rpcUrl;
    const anvil = new URL(anvilUrl);
    proxy = await startRpcProxy({ host: anvil.hostname, port: Number(anvil.port) });

    const caFile = path.join(dataDir, "receiver-ca.pem");
    fs.writeFileSync(caFile, opts.receiverCa);
    const apiPort = await freePort();
    const ponderPort = await freePort();
    const base: Record<string, string | undefined> = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR };
    const serviceEnv: Record<string, string> = {
      ...stack.env,
      [`RPC_URL_${opts.chainId}`]: proxy.url,
      NODE_ENV: "production",
      HASH_SECRET: randomBytes(32).toString("hex"),
      HOST: "127.0.0.1",
      PORT: String(apiPort),
      WEBHOOK_ALLOW_PRIVATE: "true",
      // A killed dispatcher's deliveries come back after 45 s instead of 3 minutes: shorter runs.
      WEBHOOK_LEASE_MS: "45000",
      NODE_EXTRA_CA_CERTS: caFile,
      ...opts.extraEnv,
    };

    // The same build and chain always get the same Ponder schema, so a restarted indexer resumes.
    const pub = createPublicClient({ transport: http(anvilUrl) });
    const dep = stack.deployments.chains[String(opts.chainId)]!;
    const startHash = (await pub.getBlock({ blockNumber: BigInt(dep.startBlock) })).hash;
    const schema = ponderSchemaName(`${opts.chainId}:${startHash}` + JSON.stringify(stack.deployments));
    const ponderBin = path.join(ROOT, "node_modules", "ponder", "dist", "esm", "bin", "ponder.js");
    const supervise = (name: string, args: string[], env: Record<string, string | undefined>) => {
      const s = new Supervised({
        name,
        command: process.execPath,
        args,
        env: { ...base, ...env },
        cwd: ROOT,
        logFile: path.join(dataDir, `${name}.log`),
        restartDelayMs: 1000,
        log: opts.log,
      });
      procs.push(s);
      return s;
    };
    const indexer = supervise(
      "indexer",
      [
        ponderBin,
        "start",
        "--schema",
        schema,
        "--views-schema",
        serviceEnv.PONDER_VIEWS_SCHEMA!,
        "--port",
        String(ponderPort),
        "--hostname",
        "127.0.0.1",
      ],
      {
        ...ponderEnv(serviceEnv),
        PORT: String(ponderPort),
        PONDER_TELEMETRY_DISABLED: "true",
        PONDER_LOG_LEVEL: process.env.PONDER_LOG_LEVEL ?? "warn",
        NODE_ENV: "production",
      },
    );
    const serve = ["--import", "tsx", "scripts/serve.ts"];
    const api = supervise("api", serve, { ...serviceEnv, ROLES: "api" });
    const processors = supervise("processors", serve, { ...serviceEnv, ROLES: "processors" });
    indexer.start();
    api.start();
    processors.start();

    const apiUrl = `http://127.0.0.1:${apiPort}/api`;
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${ponderPort}/ready`).catch(() => null))?.status === 200,
      240_000,
      "indexer ready",
    );
    await waitUntil(async () => (await fetch(`${apiUrl}/health`).catch(() => null))?.status === 200, 120_000, "api healthy");

    return {
      chainId: opts.chainId,
      dataDir,
      anvilUrl,
      apiUrl,
      serviceEnv,
      proxy,
      indexer,
      processors,
      api,
      procs: () => [indexer, processors, api],
      async restartPostgres(downMs) {
        await pg.stop();
        await new Promise((r) => setTimeout(r, downMs));
        pg = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, persistent: false });
      },
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

export async function waitUntil(fn: () => Promise<boolean>, timeoutMs: number, what: string, intervalMs = 250): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if (await fn().catch(() => false)) return Date.now() - t0;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
