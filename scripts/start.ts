import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { migrate } from "../db/migrate.js";
import { startApiServer } from "../api/server.js";
import { createDeps } from "../app/deps.js";
import { SOLANA } from "../chains/solana.js";
import { logger } from "../core/log.js";
import { ensureDemoMerchant } from "../local/demo-merchant.js";
import { startStack } from "../local/stack.js";
import { DATA_DIR, removeStackInfo, writeStackInfo } from "../local/stack-info.js";
import { allProcessors } from "../processors/index.js";
import { startProcessors } from "../processors/runner.js";

// `npm start`: the whole service on this machine. Embedded Postgres (or DATABASE_URL), Anvil chains,
// contracts, indexer, API and processors; Ctrl-C stops everything. What it prints for you (addresses, the
// demo key) goes to the console; the service's own logs are the pino logger's (pretty here: NODE_ENV unset).

/**
 * SECRET_KEY of the local service (it seals webhook secrets at rest): SECRET_KEY when set, else the key
 * made on the first start and kept in the data dir (mode 600) with the database it protects.
 */
function localSecretKey(): string {
  if (process.env.SECRET_KEY) return process.env.SECRET_KEY;
  const file = path.join(DATA_DIR, "secret-key");
  if (!fs.existsSync(file)) {
    fs.mkdirSync(DATA_DIR, { recursive: true });
    // "wx": never overwrite a key another start wrote meanwhile.
    try {
      fs.writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
  return fs.readFileSync(file, "utf8").trim();
}

const t0 = Date.now();
const log = (m: string) => console.log(`  ${m}`);
console.log("Starting the local stack…");
const chainIds = (process.env.LOCAL_CHAIN_IDS ?? "137,777177").split(",").map(Number);
const stack = await startStack({
  secretKey: localSecretKey(),
  dataDir: DATA_DIR,
  persistent: true,
  chainIds,
  blockTime: Number(process.env.BLOCK_TIME ?? 1),
  databaseUrl: process.env.DATABASE_URL,
  log,
});
// A development stack: webhooks to a receiver on this machine are fine (never in production). Each request's access
// line at debug and a summary a minute at info: health polls and `listen`'s poll do not fill this terminal.
Object.assign(
  process.env,
  {
    WEBHOOK_ALLOW_PRIVATE: process.env.WEBHOOK_ALLOW_PRIVATE ?? "true",
    REQUEST_LOG_LEVEL: process.env.REQUEST_LOG_LEVEL ?? "debug",
    REQUEST_LOG_SUMMARY_S: process.env.REQUEST_LOG_SUMMARY_S ?? "60",
  },
  stack.env,
);
const deps = createDeps();
let api: Awaited<ReturnType<typeof startApiServer>> | undefined;
let processors: ReturnType<typeof startProcessors> | undefined;

let stopping = false;
async function shutdown(code = 0) {
  if (stopping) return;
  stopping = true;
  console.log("\nStopping…");
  await processors?.stop();
  await api?.close();
  await deps.db.close();
  await stack.stop();
  removeStackInfo();
  console.log("Stopped.");
  process.exit(code);
}
// Ctrl-C / SIGTERM: we stop everything ourselves, Postgres last. Only the listeners process.listeners() shows are
// removed: tsx's own (hidden from it) tells tsx's parent process that this one got the signal; removed, tsx killed this
// process 60 ms after Ctrl-C, in the middle of "Stopping…", and left Postgres, Anvil and Ponder running.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  for (const listener of process.listeners(signal)) process.off(signal, listener);
  process.on(signal, () => void shutdown());
}

try {
  await migrate(deps.db);

  // The demo merchant: made on the first start, its login and key printed at every start (local/demo-merchant.ts).
  const demo = await ensureDemoMerchant(deps, DATA_DIR);

  api = await startApiServer(deps);
  processors = startProcessors(deps, allProcessors());
  writeStackInfo({
    databaseUrl: stack.databaseUrl,
    apiUrl: deps.config.baseUrl,
    ponderUrl: stack.ponder?.url ?? "",
    chains: stack.chains,
    pid: process.pid,
  });
  log(`api         ${deps.config.baseUrl}   (health: ${deps.config.baseUrl}/health)`);
  log(`graphql     ${stack.ponder?.url}/graphql   (Ponder's chain tables; SQL over HTTP at /sql)`);
  log(`metrics     http://${deps.config.HOST}:${api.port}/metrics   (Prometheus; from this host only unless METRICS_TOKEN is set)`);
  log(
    `processors  ${
      allProcessors()
        .map((p) => p.name)
        .join(", ") || "none"
    }`,
  );
  await stack.ponder?.waitReady(300_000);

  // What a newcomer needs, last, once everything is up.
  const appUrl = deps.config.appUrl;
  const apiUrl = deps.config.baseUrl;
  console.log(`\nReady in ${((Date.now() - t0) / 1000).toFixed(1)} s. Ctrl-C stops everything.\n`);
  log(`dashboard   ${appUrl}/dashboard`);
  log(`            log in as ${demo.email} / ${demo.password}   (the demo merchant; or sign up: ${appUrl}/dashboard/signup)`);
  log(`api docs    ${apiUrl}/docs   (OpenAPI 3.1: ${apiUrl}/openapi.json)`);
  log(`api key     ${demo.apiKey}   (the demo merchant's; \`npm run cli -- trigger paid\` uses it)`);
  log(`  curl -H "x-api-key: ${demo.apiKey}" ${apiUrl}/balance`);
  const demoChain = deps.chains.find((c) => c.tokens.some((t) => t.symbol === "USDT"));
  const demoToken = demoChain?.tokens.find((t) => t.symbol === "USDT");
  if (demoChain && demoToken)
    log(
      `  curl -H "x-api-key: ${demo.apiKey}" -H "content-type: application/json" ${apiUrl}/payments \\\n` +
        `      -d '{"merchant":"0x000000000000000000000000000000000000dEaD","chainId":"${demoChain.chainId}","token":"${demoToken.address}","amount":"10","orderId":"demo-1","gasless":true}'`,
    );
  if (stack.solana)
    log(
      `solana usdc ${stack.solana.rpcUrl} (litesvm stand-in) mints test USDC to a wallet address:\n` +
        `    curl ${stack.solana.rpcUrl} -H "content-type: application/json" \\\n` +
        `      -d '{"jsonrpc":"2.0","id":1,"method":"local_mintTo","params":["${SOLANA.usdc.mint}","<base58 address>","25000000"]}'`,
    );
  log(`logs        each request at debug (LOG_LEVEL=debug shows them), a summary of the requests each minute`);
} catch (e) {
  logger("start").error({ err: e }, "failed to start");
  await shutdown(1);
}
