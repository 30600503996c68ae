// POST /api/payments throughput and latency at concurrency 32, against a bare Hono route that parses the same
// body, measured in the same run with the same load generator and the same number of processes (the baseline).
// 400 merchants each with an API key, their requests from 400 addresses behind a trusted proxy, so neither the
// 100/min per-merchant budget nor the per-address one is what is measured. Native ETH and USDC on a local
// Sepolia: the native price comes from the oracle, the gas fee from the gas price.
//   npx tsx bench/creation.ts [seconds=10] [workers=1,2]
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import autocannon from "autocannon";
import { zeroAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createDeps } from "../app/deps.js";
import { migrate } from "../db/migrate.js";
import { guardChild, stopChild } from "../local/child.js";
import { freePort } from "../local/ports.js";
import { createApiKey, createMerchant } from "../modules/merchants/index.js";
import { benchLog, ROOT, runBench, startBenchChain, startServe } from "./lib/bench-stack.js";
import { sleep } from "./lib/stats.js";

const SECONDS = Number(process.argv[2] ?? 10);
const WORKERS = (process.argv[3] ?? "1,2").split(",").map(Number);
const CHAIN_ID = 11155111;
const KEYS = 400;
const CONNECTIONS = 32;

const chain = await startBenchChain({ name: "creation", chainId: CHAIN_ID, blockTime: 1 });
await runBench(chain, async () => {
  const deps = createDeps({ env: { ...process.env, ...chain.env } });
  await migrate(deps.db);
  benchLog(`creating ${KEYS} merchants with a key each`);
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    const m = await createMerchant(deps.db, { name: `bench-${i}` });
    keys.push((await createApiKey(deps.db, m.id)).key);
  }
  await deps.db.close();
  const usdc = chain.deployment.tokens.USDC!;
  const payout = privateKeyToAccount(generatePrivateKey()).address;

  /** One load run: `seconds` of POSTs from 32 connections, key and forwarded address rotating per request. */
  async function load(url: string, seconds: number) {
    let n = 0;
    const result = await autocannon({
      url: `${url}/api/payments`,
      connections: CONNECTIONS,
      duration: seconds,
      method: "POST",
      requests: [
        {
          setupRequest: (req) => {
            const i = n++;
            return {
              ...req,
              headers: {
                "content-type": "application/json",
                "x-api-key": keys[i % KEYS]!,
                "x-forwarded-for": `10.${(i % KEYS) >> 8}.${(i % KEYS) & 255}.1`,
              },
              body: JSON.stringify({
                merchant: payout,
                chainId: String(CHAIN_ID),
                token: i % 2 ? usdc : zeroAddress,
                amount: "12.5",
                orderId: `bench-${i}-${Date.now()}`,
              }),
            };
          },
        },
      ],
    });
    return {
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      ok: result["2xx"],
      bad: result.non2xx + result.errors + result.timeouts,
    };
  }

  async function bareHono(workers: number): Promise<{ url: string; stop(): Promise<void> }> {
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "bench", "lib", "bare-hono.ts")], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, PORT: String(port), WORKERS: String(workers), NODE_ENV: "production" },
      stdio: ["ignore", "inherit", "inherit"],
    });
    guardChild(child);
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      if (await fetch(`${url}/api/payments`, { method: "POST", body: "{}" }).catch(() => null)) break;
      if (i > 300) throw new Error("bare Hono did not start");
      await sleep(100);
    }
    return { url, stop: () => stopChild(child, 5_000) };
  }

  const rows: string[] = [];
  const fmt = (r: Awaited<ReturnType<typeof load>>) =>
    `${r.rps.toFixed(0).padStart(6)}/s  p50 ${String(r.p50).padStart(3)} ms  p99 ${String(r.p99).padStart(3)} ms  (${r.ok} ok, ${r.bad} not)`;
  for (const workers of WORKERS) {
    benchLog(`bare Hono, ${workers} process(es)`);
    const bare = await bareHono(workers);
    await load(bare.url, 2); // warm-up
    const base = await load(bare.url, SECONDS);
    await bare.stop();

    benchLog(`POST /api/payments, API_WORKERS=${workers}`);
    const serve = await startServe(chain, {
      env: {
        ROLES: "api",
        API_WORKERS: String(workers),
        TRUSTED_PROXIES: "loopback",
        ...(process.env.DATABASE_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE } : {}),
      },
      log: `serve-${workers}.log`,
    });
    const url = serve.apiUrl.replace(/\/api$/, "");
    await load(url, 2); // warm-up: JIT, pools, caches
    const ours = await load(url, SECONDS);
    await serve.stop();
    if (ours.bad > 0) benchLog(`${ours.bad} requests did not succeed (see ${chain.dataDir}/serve-${workers}.log)`);
    rows.push(
      `processes ${workers}:  bare Hono ${fmt(base)}`,
      `             POST /payments ${fmt(ours)}`,
      `             ratio ${(ours.rps / base.rps).toFixed(2)} (target ≥ 0.33, or ≥ 1,500/s with p99 < 50 ms)`,
    );
  }
  console.log(`POST /api/payments at concurrency ${CONNECTIONS}, ${SECONDS} s per run, ${KEYS} keys, chain ${CHAIN_ID}`);
  for (const r of rows) console.log(r);
});
