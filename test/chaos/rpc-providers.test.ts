import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createPublicClient, getAddress, http as viemHttp, parseUnits, type Address, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startApiServer } from "../../api/server.js";
import { createDeps } from "../../app/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { migrate } from "../../db/migrate.js";
import { ponderSchemaName, startPonder, type PonderProcess } from "../../local/ponder.js";
import { startStack, type Stack } from "../../local/stack.js";
import { createApiKey, createMerchant } from "../../modules/merchants/index.js";
import { allProcessors } from "../../processors/index.js";
import { startProcessors, type ProcessorRunner } from "../../processors/runner.js";
import { chainHelpers, waitFor } from "../helpers/chain.js";
import { readResponse } from "../helpers/clocked-api.js";
import { startHostileRpc, type HostileRpc } from "../helpers/hostile-rpc.js";

// RPC providers as they really are, end to end: the whole service (API, processors, and Ponder as a process of its
// own) reads chain 777177 through four JSON-RPC proxies of ours, one per "provider", listed in RPC_URL_777177 with the
// healthy one last: the first answers 429 with Retry-After 60, the second hangs (then answers 5xx), the third lags 10
// blocks behind. Payments are created, paid, detected and settled throughout, each exactly once, the indexer keeps up,
// and no read of the service that decides money reaches the lagging provider once it is known to lag. Then every
// provider is down for a while (60 s with CHAOS_SCALE=full, 10 s in `npm test`): creation answers the spec's 503, and
// everything paid meanwhile completes once they are back.

const CHAIN_ID = 777177;
const FULL = process.env.CHAOS_SCALE === "full";
const OUTAGE_MS = FULL ? 60_000 : 10_000;
/** Methods whose answers decide money (a balance, a contract's state, a nonce): never from the lagging provider. */
const MONEY_READS = new Set(["eth_getBalance", "eth_call", "eth_getTransactionCount", "eth_getStorageAt", "eth_getCode"]);

let stack: Stack;
let ponder: PonderProcess | undefined;
let deps: AppDeps;
let api: Awaited<ReturnType<typeof startApiServer>>;
let processors: ProcessorRunner;
let chain: ActiveChain;
let anvil: PublicClient;
let dataDir: string;
let providers: { limited: HostileRpc; hanging: HostileRpc; lagging: HostileRpc; healthy: HostileRpc };

beforeAll(async () => {
  dataDir = path.resolve(".data/chaos", `rpc-providers-${process.pid}`);
  stack = await startStack({ dataDir, fresh: true, chainIds: [CHAIN_ID], blockTime: 1, ponder: false });
  const upstream = stack.chains[0]!.rpcUrl;
  anvil = createPublicClient({ transport: viemHttp(upstream) }) as PublicClient;
  providers = {
    limited: await startHostileRpc({ upstream, label: "limited" }),
    hanging: await startHostileRpc({ upstream, label: "hanging" }),
    lagging: await startHostileRpc({ upstream, label: "lagging" }),
    healthy: await startHostileRpc({ upstream, label: "healthy" }),
  };
  await providers.limited.setMode({ kind: "rate_limit", retryAfterS: 60 });
  await providers.hanging.setMode({ kind: "hang" });
  await providers.lagging.setMode({ kind: "lag", blocks: 10 });
  const rpcUrls = [providers.limited, providers.hanging, providers.lagging, providers.healthy].map((p) => p.url).join(",");
  // The service and the indexer wait 2 s for an answer before they ask the next provider.
  const env: Record<string, string> = { ...stack.env, [`RPC_URL_${CHAIN_ID}`]: rpcUrls, RPC_TIMEOUT_MS: "2000" };
  const startBlock = stack.deployments.chains[String(CHAIN_ID)]!.startBlock;
  const startHash = (await anvil.getBlock({ blockNumber: BigInt(startBlock) })).hash;
  ponder = await startPonder({
    env,
    schema: ponderSchemaName(`${CHAIN_ID}:${startHash}` + JSON.stringify(stack.deployments)),
    viewsSchema: env.PONDER_VIEWS_SCHEMA!,
    logFile: path.join(dataDir, "ponder.log"),
  });
  await ponder.waitReady(180_000);
  deps = createDeps({ env: { ...env, WEBHOOK_ALLOW_PRIVATE: "true" } });
  await migrate(deps.db);
  api = await startApiServer(deps, 0);
  chain = deps.chains.find((c) => c.chainId === CHAIN_ID)!;
  processors = startProcessors(deps, allProcessors(), () => {});
});

afterAll(async () => {
  await processors?.stop();
  await api?.close();
  await deps?.db.close();
  await ponder?.stop();
  for (const p of Object.values(providers ?? {})) await p.close();
  await stack?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function http(method: string, p: string, apiKey?: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${api.port}/api${p}`, {
    method,
    headers: { ...(apiKey ? { "x-api-key": apiKey } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return readResponse(res);
}
const health = async () => (await http("GET", "/health")).body as { status: string; issues: string[]; rpc: any[] };

async function newMerchant() {
  const m = await createMerchant(deps.db, { name: `Providers ${Math.random()}` });
  const apiKey = (await createApiKey(deps.db, m.id)).key;
  await deps.db.pool.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', 100000000, $2)`,
    [m.id, `fund:${m.id}`],
  );
  return { id: m.id, apiKey, payout: privateKeyToAccount(generatePrivateKey()).address };
}
function create(m: { apiKey: string; payout: Address }, amount: string) {
  const token = chainHelpers(chain).token("USDC").address;
  return http("POST", "/payments", m.apiKey, {
    orderId: `rpc-${Math.random()}`,
    chainId: String(CHAIN_ID),
    token,
    amount,
    merchant: m.payout,
  });
}
const idOf = (res: { body: any }) => (res.body.url as string).split("/pay/")[1]!;
async function row(id: string) {
  return (await deps.db.pool.query(`SELECT * FROM payments WHERE id = $1`, [id])).rows[0];
}
/** Pays on the chain directly (the payer's own node), not through the service's providers. */
async function pay(id: string, units: bigint) {
  const h = chainHelpers({ ...chain, rpcUrl: stack.chains[0]!.rpcUrl, rpcUrls: [stack.chains[0]!.rpcUrl] });
  await h.pay("USDC", getAddress((await row(id)).recipient_address), units);
}
async function completedOnce(id: string, payout: Address, units: bigint) {
  const { rows } = await deps.db.pool.query(
    `SELECT count(*)::int AS n FROM payment_events WHERE payment_id = $1 AND to_status = 'completed'`,
    [id],
  );
  expect(rows[0].n).toBe(1);
  const h = chainHelpers({ ...chain, rpcUrl: stack.chains[0]!.rpcUrl, rpcUrls: [stack.chains[0]!.rpcUrl] });
  expect(await h.balanceOf("USDC", payout)).toBe(units);
}
/** The indexer's distance to the chain's head now, in blocks. */
async function indexerLag() {
  const head = await anvil.getBlockNumber({ cacheTime: 0 });
  const p = (await indexerProgress(deps.db))?.find((x) => x.chainId === CHAIN_ID);
  return p ? Number(head) - p.indexedBlock : Infinity;
}

it(
  "429 with Retry-After, a hanging provider and one 10 blocks behind: payments complete once each, the indexer keeps up, money is never read from the lagging one, health and metrics name them",
  { timeout: 240_000 },
  async () => {
    const units = parseUnits("4", 6);
    const lags: number[] = [];
    const sampler = setInterval(
      () =>
        void indexerLag().then(
          (l) => lags.push(l),
          () => {},
        ),
      1_000,
    );
    try {
      const merchants = [];
      for (let i = 0; i < 4; i++) {
        if (i === 2) await providers.hanging.setMode({ kind: "error_5xx", status: 503 });
        const m = await newMerchant();
        const res = await create(m, "4");
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const id = idOf(res);
        await pay(id, units);
        merchants.push({ ...m, paymentId: id });
      }
      for (const m of merchants)
        await waitFor(async () => (await row(m.paymentId)).status === "completed", {
          timeout: 90_000,
          what: `payment ${m.paymentId} completed`,
        });
      for (const m of merchants) await completedOnce(m.paymentId, m.payout, units);
    } finally {
      clearInterval(sampler);
    }
    console.log(`[measure] indexer lag while providers misbehave (blocks, one sample a second): ${lags.join(" ")}`);
    expect(Math.max(...lags)).toBeLessThanOrEqual(5);

    // Health and metrics name each misbehaving provider.
    const h = await health();
    const states = Object.fromEntries(h.rpc[0].providers.map((p: any) => [p.provider.split(":").slice(1).join(":"), p.state]));
    const host = (p: HostileRpc) => new URL(p.url).host;
    expect(states[host(providers.limited)]).toBe("rate_limited");
    expect(states[host(providers.lagging)]).toBe("lagging");
    expect(states[host(providers.healthy)]).toBe("ok");
    expect(h.issues.some((i) => i.includes(host(providers.limited)) && i.includes("rate_limited"))).toBe(true);
    expect(h.issues.some((i) => i.includes(host(providers.lagging)) && i.includes("lagging"))).toBe(true);
    const metrics = await (await fetch(`http://127.0.0.1:${api.port}/metrics`)).text();
    expect(metrics).toMatch(
      new RegExp(`chainpay_rpc_provider_state\\{chain_id="${CHAIN_ID}",provider="1:${host(providers.limited)}",state="rate_limited"\\} 1`),
    );
    expect(metrics).toMatch(
      new RegExp(`chainpay_rpc_errors_total\\{chain_id="${CHAIN_ID}",provider="2:${host(providers.hanging)}",kind="timeout"\\} [1-9]`),
    );
    expect(metrics).toMatch(
      new RegExp(`chainpay_rpc_head_lag_blocks\\{chain_id="${CHAIN_ID}",provider="3:${host(providers.lagging)}"\\} (9|10|11)`),
    );

    // The rate-limited provider was left alone after each 429 until its Retry-After (60 s) had passed: the service's
    // requests to it come in bursts (those already under way when it answered) at least a minute apart.
    const limitedAsked = providers.limited.log.filter((l) => l.client === "service");
    const gaps = limitedAsked.slice(1).map((l, i) => l.at - limitedAsked[i]!.at);
    expect(
      gaps.every((g) => g < 2_000 || g >= 59_000),
      JSON.stringify(limitedAsked.map((l) => [l.at - limitedAsked[0]!.at, l.method, l.answered])),
    ).toBe(true);
    // Once the lagging provider answered its first head, no read of the service that decides money went to it.
    const service = providers.lagging.log.filter((l) => l.client === "service");
    const known = service.find((l) => l.method === "eth_blockNumber");
    expect(known).toBeDefined();
    const money = service.filter((l) => l.at > known!.at + 100 && MONEY_READS.has(l.method));
    expect(money, JSON.stringify(money.slice(0, 5))).toEqual([]);
  },
);

it(
  "every provider down: nothing is lost; a payment created and paid meanwhile, and one paid meanwhile, complete once they are back",
  { timeout: 240_000 },
  async () => {
    for (const p of Object.values(providers)) await p.setMode({ kind: "ok" });
    const m = await newMerchant();
    const before = await create(m, "6");
    expect(before.status).toBe(200);
    const paidId = idOf(before);

    for (const p of Object.values(providers)) await p.setMode({ kind: "down" });
    const downAt = Date.now();
    // Paid on the chain while the service cannot see it.
    await pay(paidId, parseUnits("6", 6));
    // Chain 777177 has no gas fee to quote: a payment is created as usual (its address needs no chain) and waits to be
    // seen. On a chain with a gas fee creation answers 503 Oracle price unavailable (test/modules/payments/create.test.ts).
    const during = await create(m, "2");
    expect(during.status, JSON.stringify(during.body)).toBe(200);
    const duringId = idOf(during);
    await pay(duringId, parseUnits("2", 6));
    await waitFor(
      async () => {
        const h = await health();
        return Object.values(providers).every((p) =>
          h.issues.some((i) => i.startsWith(`rpc ${CHAIN_ID} provider `) && i.includes(new URL(p.url).host)),
        );
      },
      { timeout: 30_000, what: "health names every provider" },
    );
    expect((await health()).status).toBe("degraded");
    await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - downAt))));

    for (const p of Object.values(providers)) await p.setMode({ kind: "ok" });
    console.log(`[measure] providers down for ${Date.now() - downAt} ms`);
    const backAt = Date.now();
    for (const id of [paidId, duringId])
      await waitFor(async () => (await row(id)).status === "completed", {
        timeout: 120_000,
        what: `payment ${id} completed after the outage`,
      });
    console.log(`[measure] providers back -> both completed: ${Date.now() - backAt} ms`);
    // Both swept to the merchant's payout, each exactly once: 6 + 2.
    await completedOnce(paidId, m.payout, parseUnits("8", 6));
    await completedOnce(duringId, m.payout, parseUnits("8", 6));
    await waitFor(async () => (await health()).issues.every((i) => !i.startsWith(`rpc ${CHAIN_ID}`)), {
      timeout: 60_000,
      what: "health clear of providers",
    });
  },
);
