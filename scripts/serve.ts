import { serveClusterMetrics } from "../api/metrics-cluster.js";
import { startMetricsServer } from "../api/metrics-server.js";
import { startApiServer } from "../api/server.js";
import { factoryMismatch } from "../chains/factory-check.js";
import { forkApiWorkers, isApiWorker, type ApiWorkers } from "../api/workers.js";
import { chainClients } from "../chains/clients.js";
import { activeChains } from "../chains/runtime.js";
import { createDeps } from "../app/deps.js";
import type { AppDeps } from "../core/deps.js";
import { logger } from "../core/log.js";
import { checkServeConfig, formatServeCheck } from "../app/roles.js";
import { runDoctor } from "../app/doctor.js";
import { migrate } from "../db/migrate.js";
import { ponderEnv, ponderSchemaName, startPonder, type PonderProcess } from "../local/ponder.js";
import { allProcessors } from "../processors/index.js";
import { startProcessors, type ProcessorRunner } from "../processors/runner.js";
import { payoutFundingWarning } from "../modules/agents/index.js";

// `npm run serve`: the production entrypoint. Runs the roles named in ROLES (api, processors, indexer;
// all by default) from the environment alone: no Anvil, no embedded Postgres, no demo merchant.
// Configuration: docs/configuration.md, docs/real-chain.md. Logs: JSON lines on stdout
// (docs/observability.md); the logger is made on first use, after NODE_ENV is settled here.
const env = process.env;
env.NODE_ENV ??= "production";
const logs = logger("serve");

const check = checkServeConfig(env);
if (check.missing.length || check.invalid.length) {
  // For the person starting it, before there is a service: plain text on stderr.
  console.error(formatServeCheck(check));
  console.error("See docs/real-chain.md.");
  process.exit(1);
}
// An API worker (API_WORKERS > 1, api/workers.ts) serves the API only; its primary ran the migrations.
const worker = isApiWorker();
const roles = worker ? ["api"] : check.roles;
const apiWorkers = worker ? 1 : Number(env.API_WORKERS || 1);
const log = (m: string) => logs.info(m);

let deps: AppDeps | undefined;
let ponder: PonderProcess | undefined;
let api: Awaited<ReturnType<typeof startApiServer>> | undefined;
let processors: ProcessorRunner | undefined;
let metrics: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
let workers: ApiWorkers | undefined;

let stopping = false;
async function shutdown(code: number) {
  if (stopping) return;
  stopping = true;
  // A signal to the whole process group stops the workers too: none is replaced while the rest shuts down.
  workers?.release();
  log("stopping…");
  // A stuck pass or connection must not keep a supervisor waiting forever.
  setTimeout(() => {
    logs.error("did not stop within 30 s; exiting");
    process.exit(1);
  }, 30_000).unref();
  const step = (what: string, p: Promise<unknown> | undefined) => p?.catch((e) => logs.error({ err: e }, `stopping ${what} failed`));
  await step("processors", processors?.stop());
  await step("api", api?.close());
  await step("api workers", workers?.stop());
  await step("metrics", metrics?.close());
  await step("database pool", deps?.db.close());
  await step("indexer", ponder?.stop());
  log("stopped");
  process.exit(code);
}
process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));

/**
 * Each chain's providers, named without secrets, and their chain ids: a provider answering for another chain would
 * index and pay on the wrong chain, so the service does not start. One that does not answer now is only a warning.
 */
async function checkProviders() {
  const chains = activeChains(env);
  const { pools } = chainClients(chains);
  for (const chain of chains) {
    const pool = pools.get(chain.chainId)!;
    log(
      `chain ${chain.chainId} providers ${pool
        .providers()
        .map((p) => p.label)
        .join(", ")}`,
    );
    const { unreachable } = await pool.verifyChainIds();
    for (const label of unreachable) logs.warn({ chainId: chain.chainId, provider: label }, "RPC provider does not answer now");
  }
}

/** Starts each role in turn; a signal meanwhile stops what has started and nothing more starts. */
async function start() {
  if (!worker) await checkProviders();
  if (roles.includes("indexer")) {
    const chains = activeChains(env);
    // Same build and same contracts: the same Ponder schema, so a restart resumes where it stopped.
    const chainKey = JSON.stringify(chains.map((c) => [c.chainId, c.factory, c.startBlock, c.tokens.map((t) => t.address)]));
    const viewsSchema = env.PONDER_VIEWS_SCHEMA || "chain";
    const p = await startPonder({
      // The indexer is a third-party process with SQL over HTTP: it gets no keys or secrets.
      env: ponderEnv(env),
      inheritEnv: false,
      schema: env.PONDER_SCHEMA || ponderSchemaName(chainKey),
      viewsSchema,
      port: Number(env.PONDER_PORT || 42069),
    });
    ponder = p;
    p.process.once("exit", (code, signal) => {
      if (stopping) return;
      logs.error({ code, signal }, "indexer exited");
      void shutdown(1);
    });
    log(`indexer     ${p.url} (schema ${p.schema}, views ${viewsSchema})`);
    void p.waitReady(Number.MAX_SAFE_INTEGER).then(
      () => log("indexer ready"),
      () => {},
    );
  }
  if (stopping) return;

  if (roles.includes("api") || roles.includes("processors")) {
    deps = createDeps({ env });
    // With API workers, a worker's /metrics asks this process for the whole group's (api/metrics-cluster.ts).
    if (!worker) serveClusterMetrics(deps);
    if (!worker) {
      const { applied } = await migrate(deps.db);
      log(`database    schema ${deps.db.schema}${applied.length ? ` (applied ${applied.join(", ")})` : ""}`);
    }
  }
  if (stopping) return;
  if (deps && !worker) {
    // A factory of another release would hand out addresses nothing can sweep: refuse to serve. An RPC that does not
    // answer now (an outage) does not stop the start; the check runs again at the next start.
    for (const chain of deps.chains.filter((c) => c.factory)) {
      const problem = await factoryMismatch(deps.clients.get(chain.chainId)!, chain.factory!, chain.implementation).catch((e: Error) => {
        logs.warn({ chainId: chain.chainId, err: e }, "factory check skipped: RPC unavailable");
        return null;
      });
      if (problem) throw new Error(`chain ${chain.chainId}: ${problem}`);
    }
    // The doctor's checks (npm run cli -- doctor): the fatal ones refuse the start, the others are logged.
    const checks = await runDoctor(env);
    for (const c of checks.filter((x) => x.status !== "ok"))
      logs.warn({ check: c.name, detail: c.detail, fix: c.fix }, `doctor: ${c.status}`);
    const fatal = checks.filter((c) => c.status === "fail" && c.fatal);
    if (fatal.length) throw new Error(fatal.map((c) => `${c.name}: ${c.detail}${c.fix ? ` (${c.fix})` : ""}`).join("; "));
  }
  if (stopping) return;
  if (deps && roles.includes("api") && apiWorkers > 1) {
    workers = await forkApiWorkers(apiWorkers, log);
    log(`api         ${deps.config.baseUrl} (${apiWorkers} workers listening on ${deps.config.HOST}:${deps.config.PORT})`);
  } else if (deps && roles.includes("api")) {
    api = await startApiServer(deps);
    if (!worker) log(`api         ${deps.config.baseUrl} (listening on ${deps.config.HOST}:${api.port})`);
  }
  if (stopping) return;
  if (deps && roles.includes("processors")) {
    const list = allProcessors();
    processors = startProcessors(deps, list);
    log(`processors  ${list.map((p) => p.name).join(", ") || "none"}`);
    const payoutWarning = payoutFundingWarning(deps.config);
    if (payoutWarning) logs.warn(payoutWarning);
  }
  if (stopping) return;
  if (deps && !worker && deps.config.METRICS_PORT !== undefined) {
    metrics = await startMetricsServer(deps, deps.config.METRICS_PORT);
    log(`metrics     http://${deps.config.METRICS_HOST}:${metrics.port}/metrics`);
  }
  if (worker) return;
  log(
    `chains      ${activeChains(env)
      .map((c) => `${c.chainId} (${c.name})`)
      .join(", ")}`,
  );
  log(`serving ${roles.join(", ")}`);
}

try {
  await start();
} catch (e) {
  logs.error({ err: e }, "failed to start");
  await shutdown(1);
}
