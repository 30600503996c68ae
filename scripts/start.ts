import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { migrate } from "../db/migrate.js";
import { startApiServer } from "../api/server.js";
import { createDeps } from "../app/deps.js";
import { SOLANA } from "../chains/solana.js";
import { logger } from "../core/log.js";
import { createApiKey, createMerchant } from "../modules/merchants/index.js";
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
// A development stack: webhooks to a receiver on this machine are fine (never in production).
Object.assign(process.env, { WEBHOOK_ALLOW_PRIVATE: process.env.WEBHOOK_ALLOW_PRIVATE ?? "true" }, stack.env);
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
// Ctrl-C / SIGTERM: we stop everything ourselves, Postgres last.
process.removeAllListeners("SIGINT");
process.removeAllListeners("SIGTERM");
process.on("SIGINT", () => void shutdown());
process.on("SIGTERM", () => void shutdown());

try {
  await migrate(deps.db);

  // A demo merchant on first start; its key is kept in the data dir so later starts can print it.
  const keyFile = path.join(DATA_DIR, "demo-api-key");
  let demoKey = fs.existsSync(keyFile) ? fs.readFileSync(keyFile, "utf8").trim() : undefined;
  const { rows } = await deps.db.pool.query(`SELECT count(*)::int AS n FROM merchants WHERE name = 'Demo Merchant'`);
  if (!demoKey || rows[0].n === 0) {
    const merchant = await createMerchant(deps.db, { name: "Demo Merchant", email: "demo@example.com", password: "demo" });
    demoKey = (await createApiKey(deps.db, merchant.id, "demo")).key;
    fs.writeFileSync(keyFile, demoKey + "\n", { mode: 0o600 });
  }

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
  console.log(`\nDemo merchant API key: ${demoKey}`);
  console.log(`  curl -H "x-api-key: ${demoKey}" ${deps.config.baseUrl}/balance`);
  const demoChain = deps.chains.find((c) => c.tokens.some((t) => t.symbol === "USDT"));
  const demoToken = demoChain?.tokens.find((t) => t.symbol === "USDT");
  if (demoChain && demoToken)
    console.log(
      `  curl -H "x-api-key: ${demoKey}" -H "content-type: application/json" ${deps.config.baseUrl}/payments \\\n` +
        `    -d '{"merchant":"0x000000000000000000000000000000000000dEaD","chainId":"${demoChain.chainId}","token":"${demoToken.address}","amount":"10","orderId":"demo-1","gasless":true}'`,
    );
  if (stack.solana)
    console.log(
      `\nUSDC on the local Solana (${stack.solana.rpcUrl}, litesvm stand-in) for a wallet address:\n` +
        `  curl ${stack.solana.rpcUrl} -H "content-type: application/json" \\\n` +
        `    -d '{"jsonrpc":"2.0","id":1,"method":"local_mintTo","params":["${SOLANA.usdc.mint}","<base58 address>","25000000"]}'`,
    );
  await stack.ponder?.waitReady(300_000);
  console.log(`\nReady in ${((Date.now() - t0) / 1000).toFixed(1)} s. Ctrl-C stops everything.`);
} catch (e) {
  logger("start").error({ err: e }, "failed to start");
  await shutdown(1);
}
