import { afterAll, beforeAll, expect, it } from "vitest";
import { createPublicClient, http, type PublicClient } from "viem";
import { activeChains, type ActiveChain } from "../../chains/runtime.js";
import { createDeps } from "../../app/deps.js";
import type { AppDeps } from "../../core/deps.js";
import { resolveNativePriceUsd } from "../../modules/pricing/index.js";
import { apiClient, newCounters } from "./harness/api-client.js";
import { startChaosStack, type ChaosStack } from "./harness/chaos-stack.js";
import { drainWebhooks, waitHealthGreen, waitSettled } from "./harness/drain.js";
import { fundPayers, runPayments, setupMerchants } from "./harness/driver.js";
import { planFaults, runFaults, describeFault } from "./harness/faults.js";
import { chaosSeed, createRng } from "./harness/rng.js";
import { CHAOS_SCALES } from "./harness/scale.js";
import { planScenario } from "./harness/scenario.js";
import { verify } from "./harness/verify.js";
import { startWebhookReceiver, type WebhookReceiver } from "./harness/webhook-receiver.js";

// Fault injection over the whole money path (issue 11): payments created and paid on Anvil while the
// indexer, the processors and the API are SIGKILLed and restarted by a supervisor, Postgres is restarted
// and the chain RPC refuses connections for 10 s. Then, after a drain: every fully paid payment completed
// exactly once and swept once, payouts exact to the smallest unit, the Gas Tank ledger equal to the fees
// settled, every subscribed webhook delivered, and health green.
//
// CHAOS_SCALE=full: 300 payments, several kills of each process; default (inside `npm test`): about 30.
// CHAOS_SEED=<n> replays a run's plan (payments, amounts, fault moments; timing-dependent outcomes differ).
//
// Health bound: green within HEALTH_BOUND_MS of the last fault. A SIGKILLed Ponder waits up to ~30 s for
// its schema lock before it re-indexes, and the processors wait for the indexer, so 180 s is generous.
const FULL = process.env.CHAOS_SCALE === "full";
const SCALE = CHAOS_SCALES[FULL ? "full" : "small"];
const HEALTH_BOUND_MS = 180_000;
/** Sepolia's local twin: native ETH, a USDT-like token (transfer returns no bool) and an ERC-20 (USDC); finality 30 blocks. */
const CHAIN_ID = 11155111;
const SEED = chaosSeed();
const log = (m: string) => console.log(`[chaos] ${m}`);

let stack: ChaosStack | undefined;
let receiver: WebhookReceiver | undefined;
let deps: AppDeps | undefined;

beforeAll(async () => {
  log(`seed ${SEED} (replay with CHAOS_SEED=${SEED}), scale ${FULL ? "full" : "small"}`);
  const rng = createRng(SEED);
  receiver = await startWebhookReceiver(rng.fork("receiver"), { failRate: 0.15, slowRate: 0.15, slowMs: [300, 3000] });
  stack = await startChaosStack({
    chainId: CHAIN_ID,
    blockTime: 1,
    receiverCa: receiver.ca,
    // The pruner's heartbeat shows within the health bound (default pass every 5 minutes).
    extraEnv: { SYNC_PRUNE_INTERVAL_MS: "20000" },
    log,
  });
  // The test's own view: the database, and Anvil directly (never through the proxy).
  deps = createDeps({ env: { ...stack.serviceEnv, [`RPC_URL_${CHAIN_ID}`]: stack.anvilUrl, NODE_ENV: "development" } });
});

let passed = false;
afterAll(async () => {
  await deps?.db.close();
  // A failed run keeps the processes' logs (outside run-<pid>, which the next run would clean).
  const keep = !passed && stack ? `${stack.dataDir.replace(/run-\d+$/, "")}failed-${SEED}` : undefined;
  if (keep) log(`logs kept in ${keep}`);
  await stack?.stop(keep);
  await receiver?.close();
});

it(`survives SIGKILLs, a Postgres restart and an RPC outage (seed ${SEED})`, async () => {
  const started = Date.now();
  const rng = createRng(SEED);
  const chain: ActiveChain = activeChains({ ...stack!.serviceEnv, [`RPC_URL_${CHAIN_ID}`]: stack!.anvilUrl })[0]!;
  const pub = createPublicClient({ transport: http(stack!.anvilUrl) }) as PublicClient;
  const createCounters = newCounters();
  const otherCounters = newCounters();
  const createApi = apiClient(stack!.apiUrl, createCounters);
  const api = apiClient(stack!.apiUrl, otherCounters);
  const routed = (method: string, path: string, opts?: Parameters<typeof api>[2]) =>
    method === "POST" && path === "/payments" ? createApi(method, path, opts) : api(method, path, opts);

  const scenario = planScenario(rng.fork("scenario"), {
    seed: SEED,
    payments: SCALE.payments,
    merchants: SCALE.merchants,
    creationWindowMs: SCALE.creationMs,
  });
  const faults = planFaults(rng.fork("faults"), { windowMs: SCALE.windowMs, kills: SCALE.kills, minGapMs: SCALE.gapMs });
  log(`fault plan: ${faults.map((f) => `+${(f.atMs / 1000).toFixed(1)}s ${describeFault(f)}`).join("; ")}`);

  const merchants = await setupMerchants({
    db: deps!.db,
    api: routed,
    chain,
    plans: scenario.merchants,
    receiver: receiver!,
    gasTankUsdt: SCALE.tank,
    log,
  });
  const payers = await fundPayers(chain, SCALE.payers);

  // The fault window: payments and faults at once.
  const t0 = Date.now();
  const [records, faultRun] = await Promise.all([
    runPayments({ api: routed, chain, merchants, plans: scenario.payments, payers, t0, log }),
    runFaults({
      stack: stack!,
      receiver: receiver!,
      faults,
      t0,
      log,
      leasedDeliveries: async () =>
        (
          await deps!.db.pool.query<{ l: string }>(
            `SELECT id || '@' || locked_until AS l FROM webhook_deliveries WHERE status = 'pending' AND locked_until > now()`,
          )
        ).rows.map((r) => r.l),
    }),
  ]);
  log(`window closed after ${((Date.now() - t0) / 1000).toFixed(1)} s; draining`);

  receiver!.heal();
  const headAfterFaults = Number(await pub.getBlockNumber());
  const green = await waitHealthGreen(stack!.apiUrl, faultRun.endedAt, headAfterFaults + 2, HEALTH_BOUND_MS);
  log(`health green ${green.ms} ms after the last fault`);
  const settleMs = await waitSettled(deps!.db.pool, records, FULL ? 600_000 : 300_000, log);
  // Leases of deliveries a killed dispatcher held last 3 minutes: the drain waits them out.
  const hooks = await drainWebhooks({ pool: deps!.db.pool, api: routed, merchants, receiver: receiver!, timeoutMs: 420_000, log });

  const gasTankBalances = new Map<string, string>();
  for (const m of merchants.filter((x) => x.gasTank))
    gasTankBalances.set(m.id, (await routed("GET", "/balance", { apiKey: m.apiKey })).body.balance);
  const result = await verify({
    pool: deps!.db.pool,
    pub,
    chain,
    merchants,
    records,
    receiver: receiver!,
    ambiguousCreates: createCounters.ambiguous,
    gasTankBalances,
    api: routed,
    viewsSchema: stack!.serviceEnv.PONDER_VIEWS_SCHEMA!,
    nativePriceUsd18: (await resolveNativePriceUsd(deps!, CHAIN_ID, undefined, { cached: true }))?.priceUsd18 ?? null,
  });

  const procs = stack!.procs();
  const n = result.numbers;
  const paid = records.filter((r) => r.dueUnits !== undefined && r.sentUnits >= r.dueUnits).length;
  const partial = records.filter((r) => r.dueUnits !== undefined && r.sentUnits > 0n && r.sentUnits < r.dueUnits).length;
  const summary = [
    `seed ${SEED}`,
    `scale ${FULL ? "full" : "small"}`,
    `payments planned ${records.length} created ${records.filter((r) => r.paymentId).length} paid-in-full ${paid} partial ${partial} completed ${n.completed} partial-still-pending ${n.partialPending} orphans ${n.orphans}`,
    `sweeps ${n.sweeps}`,
    `kills ${procs.map((p) => `${p.name}=${p.kills}`).join(" ")}`,
    `restarts ${procs.map((p) => `${p.name}=${p.starts - 1}`).join(" ")}`,
    `unexpected-exits ${procs.map((p) => `${p.name}=${p.exits.filter((e) => !e.killedByUs).length}`).join(" ")}`,
    `postgres-restarts 1 rpc-outages 1`,
    `processors-kills-mid-batch ${faultRun.leftLeased.filter((n) => n > 0).length} (deliveries left leased per kill: ${faultRun.leftLeased.join(",") || "-"})`,
    `reorgs ${n.reorgs}`,
    `create-retries ${createCounters.retries} ${JSON.stringify(createCounters.causes)} (unanswered ${createCounters.ambiguous}) other-retries ${otherCounters.retries} ${JSON.stringify(otherCounters.causes)}`,
    `webhooks outbox ${n.outboxRows} requests ${n.webhookRequests} answered-500 ${receiver!.stats().answered500} delivered ${n.webhooksDelivered} duplicates-delivered ${n.duplicatesDelivered} resent-via-api ${hooks.resends}`,
    `gas-tank-fees ${n.gasTankFeesMicros} micros`,
    `health-green ${green.ms} ms after the last fault (bound ${HEALTH_BOUND_MS} ms)`,
    `settled-after-window ${settleMs} ms webhooks-drained ${hooks.ms} ms`,
    `total ${((Date.now() - started) / 1000).toFixed(0)} s`,
  ].join(" | ");
  log(`SUMMARY ${summary}`);
  for (const f of faultRun.log) log(`  fault +${(f.atMs / 1000).toFixed(1)}..${(f.endMs / 1000).toFixed(1)} s ${f.what}`);
  if (result.failures.length) log(`FAILURES (${result.failures.length}):\n  ${result.failures.slice(0, 60).join("\n  ")}`);

  expect(settleMs, "every fully paid payment completed and every partial one recorded").toBeGreaterThanOrEqual(0);
  expect(hooks.undelivered, "webhooks not delivered at the end of the drain").toBe(0);
  expect(result.failures).toEqual([]);
  expect(
    faultRun.leftLeased.some((n) => n > 0),
    "a processors kill landed with claimed deliveries not yet recorded",
  ).toBe(true);
  // The supervisor ran every planned kill.
  expect(procs.map((p) => p.kills)).toEqual([SCALE.kills.indexer, SCALE.kills.processors, SCALE.kills.api]);
  passed = true;
});
