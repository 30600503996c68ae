// Indexing at mainnet volume: a 1 s block chain carrying `--per-block` foreign ERC-20 Transfer logs from
// `--contracts` token contracts to random addresses every block, a trickle of real payments to our
// addresses, and `--open` open payments in the database. The full pipeline (our Ponder, the API and every
// processor) runs next to "Ponder alone" (bench/lib/baseline-ponder.ts: the same wildcard filter, every
// Transfer stored) on the same chain, in the same run. Prints figures; asserts nothing.
//   npx tsx bench/mainnet-volume.ts [--minutes 10] [--open 100000] [--per-block 500] [--contracts 20]
//     [--pay-every 5] [--chain 777177] [--cache on|off] [--polling 200]
// --cache on (default) runs both Ponders with their RPC cache as on a public chain (ponder.config.ts
// keeps it only for PONDER_CACHE_CHAINS); off by default.
import os from "node:os";
import pg from "pg";
import { createWalletClient, http, type Hex } from "viem";
import { testTokenAbi } from "../abis/TestToken.js";
import { viemChain } from "../chains/clients.js";
import { createDeps } from "../app/deps.js";
import { migrate } from "../db/migrate.js";
import { LOCAL_ROLES } from "../local/accounts.js";
import { startBaselinePonder } from "./lib/baseline-ponder.js";
import { benchLog, runBench, startBenchChain, startOurPonder, startServe } from "./lib/bench-stack.js";
import { deploySpammers, rpc, startLogLoad, watchHead } from "./lib/load.js";
import { benchMerchant, bulkOpenPayments, createPayment } from "./lib/payments.js";
import { countRows, createDatabase, indexedBlock, schemaSizes, syncStoreRows } from "./lib/ponder-db.js";
import { sampleProcesses } from "./lib/proc-stats.js";
import { bytes, max, mean, options, pct, sleep, table } from "./lib/stats.js";

const o = options({
  minutes: "10",
  open: "100000",
  "per-block": "500",
  contracts: "20",
  "pay-every": "5",
  chain: "777177",
  cache: "on",
  polling: "200",
});
const MINUTES = Number(o.minutes);
const OPEN = Number(o.open);
const PER_BLOCK = Number(o["per-block"]);
const CONTRACTS = Number(o.contracts);
const PAY_EVERY_MS = Number(o["pay-every"]) * 1000;
const CHAIN_ID = Number(o.chain);
const CACHE = o.cache !== "off";
const POLLING_MS = Number(o.polling);
const WARMUP_MS = 15_000;
const BASELINE_SCHEMA = "baseline";
const BASELINE_VIEWS = "baseline_views";

const ms = (x: number | undefined) => (x === undefined ? "not within 180 s" : `${(x / 1000).toFixed(1)} s`);
const log = benchLog;

const chain = await startBenchChain({ name: "bench-volume", chainId: CHAIN_ID, blockTime: 1 });
await runBench(chain, run);

async function run() {
  log(`chain ${CHAIN_ID} on ${chain.rpcUrl}, postgres ${chain.databaseUrl} (data ${chain.dataDir})`);
  const deps = createDeps({ env: { ...chain.env, APP_SCHEMA: "app" } });
  chain.onStop(() => deps.db.close());
  await migrate(deps.db);
  const serve = await startServe(chain);
  log(`api + processors at ${serve.apiUrl} (pid ${serve.process.pid})`);
  const active = deps.chains.find((c) => c.chainId === CHAIN_ID)!;
  const token = active.tokens.find((t) => t.symbol === "USDC")!;
  const merchant = await benchMerchant(deps.db);

  // 100k open payments: copies of a real one, registered like it.
  const template = await createPayment(deps.db, {
    apiUrl: serve.apiUrl,
    apiKey: merchant.key,
    chainId: CHAIN_ID,
    token: token.address,
    orderId: "template",
  });
  const t = Date.now();
  await bulkOpenPayments(deps.db, template.id, OPEN);
  log(`${OPEN} open payments inserted and registered in ${((Date.now() - t) / 1000).toFixed(1)} s`);

  // The payer of the trickle: plenty of the registry token.
  const payer = createWalletClient({ chain: viemChain(active), transport: http(active.rpcUrl), account: LOCAL_ROLES.payers[0]! });
  await waitTx(
    await payer.writeContract({
      address: token.address,
      abi: testTokenAbi,
      functionName: "mint",
      args: [payer.account.address, 10n ** 15n],
    }),
  );
  const spammers = await deploySpammers(chain.rpcUrl, CHAIN_ID, CONTRACTS);
  log(`${spammers.length} LogSpammer contracts deployed`);

  // Both indexers from the same start block, in separate databases of the same server (ponder_sync apart).
  const baselineUrl = await createDatabase(chain.databaseUrl, "baseline");
  const ours = await startOurPonder(chain, { cache: CACHE, pollingMs: POLLING_MS });
  const baseline = await startBaselinePonder({
    dir: `${chain.dataDir}/baseline-ponder`,
    databaseUrl: baselineUrl,
    chainId: CHAIN_ID,
    rpcUrl: chain.rpcUrl,
    startBlock: chain.deployment.startBlock,
    pollingMs: POLLING_MS,
    cache: CACHE,
    schema: BASELINE_SCHEMA,
    viewsSchema: BASELINE_VIEWS,
    logFile: `${chain.dataDir}/baseline-ponder.log`,
  });
  chain.onStop(() => baseline.stop());
  await Promise.all([ours.waitReady(180_000), baseline.waitReady(180_000)]);
  log(`both indexers ready (ours: schema ${ours.schema}; baseline: database baseline, schema ${BASELINE_SCHEMA})`);
  const basePool = new pg.Pool({ connectionString: baselineUrl, max: 3 });
  chain.onStop(() => basePool.end());

  const procs = sampleProcesses([
    { name: "anvil", pid: chain.anvil.process.pid!, tree: true },
    { name: "postgres (all backends)", pid: chain.postgresPid, tree: true },
    { name: "our ponder", pid: ours.process.pid!, tree: true },
    { name: "baseline ponder", pid: baseline.process.pid!, tree: true },
    { name: "api + processors", pid: serve.process.pid!, tree: true },
    { name: "bench driver (load, samplers)", pid: process.pid, tree: false },
  ]);
  chain.onStop(async () => procs.stop());

  const head = watchHead(chain.rpcUrl);
  chain.onStop(async () => head.stop());
  while (head.head() < 0) await sleep(20);
  const load = await startLogLoad({ rpcUrl: chain.rpcUrl, chainId: CHAIN_ID, spammers, perBlock: PER_BLOCK, head });
  chain.onStop(async () => void load.stop());
  log(`load: ${spammers.length} transactions x ${load.logsPerTx} Transfer logs per block; warming up ${WARMUP_MS / 1000} s`);
  await sleep(WARMUP_MS);

  // The measured window.
  const ourSchemas = [ours.schema, "ponder_sync", deps.db.schema];
  const baseSchemas = [BASELINE_SCHEMA, "ponder_sync"];
  const sizes0 = await measureSizes();
  const firstBlock = head.head() + 1;
  const windowStart = Date.now();
  const windowEnd = windowStart + MINUTES * 60_000;
  procs.reset();
  log(`measuring for ${MINUTES} min from block ${firstBlock}`);

  // Indexer lag, 4 samples a block: chain head (as the watcher saw it) minus each Ponder's latest checkpoint.
  const lag: { at: number; ours: number; baseline: number }[] = [];
  const lagSampler = (async () => {
    while (Date.now() < windowEnd) {
      const h = head.head();
      const [a, b] = await Promise.all([
        indexedBlock(deps.db.pool, ours.schema, CHAIN_ID),
        indexedBlock(basePool, BASELINE_SCHEMA, CHAIN_ID),
      ]);
      if (a !== null && b !== null) lag.push({ at: Date.now() - windowStart, ours: Math.max(0, h - a), baseline: Math.max(0, h - b) });
      if (lag.length % 40 === 0) log(`lag ours ${lag.at(-1)?.ours}, baseline ${lag.at(-1)?.baseline} blocks`);
      await sleep(250);
    }
  })();

  // Payments: from the block first seen on the node to our Transfer row, the baseline's Transfer row and `paid`,
  // all three observed the same way (one observer connection per database); `paid_at` and `completed_at` as
  // the service recorded them.
  type Tracked = {
    id: string;
    hash: Hex;
    t0?: number;
    ourRow?: number;
    baseRow?: number;
    paidSeen?: number;
    paidAt?: number;
    completedAt?: number;
  };
  const tracked: Tracked[] = [];
  const observers = await Promise.all(
    [chain.databaseUrl, baselineUrl].map(async (url) => {
      const c = new pg.Client({ connectionString: url, options: `-c search_path=${deps.db.schema}` });
      await c.connect();
      chain.onStop(() => c.end().catch(() => {}));
      return c;
    }),
  );
  const [obsOurs, obsBase] = observers as [pg.Client, pg.Client];
  const pending = () =>
    tracked.filter((p) => p.ourRow === undefined || p.baseRow === undefined || p.paidSeen === undefined || p.completedAt === undefined);
  let looking = false;
  let again = false;
  const lookRows = async (): Promise<void> => {
    if (looking) return void (again = true);
    looking = true;
    try {
      do {
        again = false;
        const open = pending();
        if (!open.length) break;
        const at = Date.now();
        const hashes = open.map((p) => p.hash);
        const [ourRows, baseRows, pays] = await Promise.all([
          obsOurs.query<{ h: string }>(
            `SELECT DISTINCT transaction_hash AS h FROM ${deps.db.viewsSchema}.transfer WHERE transaction_hash = ANY($1::text[])`,
            [hashes],
          ),
          obsBase.query<{ h: string }>(
            `SELECT DISTINCT transaction_hash AS h FROM ${BASELINE_SCHEMA}.transfer WHERE transaction_hash = ANY($1::text[])`,
            [hashes],
          ),
          obsOurs.query<{ id: string; paid_at: Date | null; completed_at: Date | null }>(
            `SELECT id, paid_at, completed_at FROM payments WHERE id = ANY($1::uuid[])`,
            [open.map((p) => p.id)],
          ),
        ]);
        const ourSet = new Set(ourRows.rows.map((r) => r.h));
        const baseSet = new Set(baseRows.rows.map((r) => r.h));
        for (const p of open) {
          if (p.ourRow === undefined && ourSet.has(p.hash)) p.ourRow = at;
          if (p.baseRow === undefined && baseSet.has(p.hash)) p.baseRow = at;
        }
        for (const r of pays.rows) {
          const p = open.find((x) => x.id === r.id)!;
          if (p.paidSeen === undefined && r.paid_at) [p.paidSeen, p.paidAt] = [at, r.paid_at.getTime()];
          if (p.completedAt === undefined && r.completed_at) p.completedAt = r.completed_at.getTime();
        }
      } while (again);
    } finally {
      looking = false;
    }
  };
  // Each Ponder NOTIFYs `<views schema>_live_query` in the commit of a block: look at once; and every 20 ms anyway.
  await Promise.all(
    [
      [obsOurs, `${deps.db.viewsSchema}_live_query`],
      [obsBase, `${BASELINE_VIEWS}_live_query`],
    ].map(async ([c, channel]) => {
      (c as pg.Client).on("notification", () => void lookRows().catch(() => {}));
      await (c as pg.Client).query(`LISTEN "${channel as string}"`);
    }),
  );
  let tracking = true;
  const poller = (async () => {
    while (tracking) {
      await lookRows().catch(() => {});
      await sleep(20);
    }
  })();

  let paymentsSent = 0;
  while (Date.now() < windowEnd) {
    const next = Date.now() + PAY_EVERY_MS;
    const p = await createPayment(deps.db, {
      apiUrl: serve.apiUrl,
      apiKey: merchant.key,
      chainId: CHAIN_ID,
      token: token.address,
      orderId: `trickle-${paymentsSent}`,
    });
    const hash = await payer.writeContract({ address: token.address, abi: testTokenAbi, functionName: "transfer", args: [p.to, p.due] });
    const entry: Tracked = { id: p.id, hash: hash.toLowerCase() as Hex };
    tracked.push(entry);
    paymentsSent++;
    void (async () => {
      const block = await waitTx(hash);
      while (head.seenAt(block) === undefined) await sleep(5);
      entry.t0 = head.seenAt(block)!;
    })();
    await sleep(Math.max(0, next - Date.now()));
  }
  await lagSampler;
  load.stop();
  const lastBlock = head.head();
  const elapsedS = (Date.now() - windowStart) / 1000;
  procs.stop();

  // Backlog: how long each indexer still needed to reach the window's last block once the load stopped.
  log(`window over at block ${lastBlock}; waiting up to 180 s for both indexers and the last payments`);
  const stoppedAt = Date.now();
  const caughtUp: { ours?: number; baseline?: number } = {};
  while (Date.now() - stoppedAt < 180_000) {
    if (caughtUp.ours === undefined && ((await indexedBlock(deps.db.pool, ours.schema, CHAIN_ID)) ?? 0) >= lastBlock)
      caughtUp.ours = Date.now() - stoppedAt;
    if (caughtUp.baseline === undefined && ((await indexedBlock(basePool, BASELINE_SCHEMA, CHAIN_ID)) ?? 0) >= lastBlock)
      caughtUp.baseline = Date.now() - stoppedAt;
    if (caughtUp.ours !== undefined && caughtUp.baseline !== undefined && !pending().length) break;
    await sleep(200);
  }
  tracking = false;
  await poller;

  // Sizes per indexed block: each database measured with its indexer's checkpoint, now that both caught up.
  const sizes1 = await measureSizes();
  const syncEnd = { ours: await syncStoreRows(deps.db.pool), baseline: await syncStoreRows(basePool) };
  const perHour = (who: "ours" | "baseline", schema: string) =>
    ((sizes1[who].bytes[schema]! - sizes0[who].bytes[schema]!) / Math.max(1, sizes1[who].block - sizes0[who].block)) * 3600;

  // What the chain carried in the window, read from the baseline (it stores every Transfer).
  const perBlock = (
    await basePool.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${BASELINE_SCHEMA}.transfer WHERE block_number BETWEEN $1 AND $2 GROUP BY block_number`,
      [firstBlock, lastBlock],
    )
  ).rows.map((r) => Number(r.n));
  const blocks = lastBlock - firstBlock + 1;
  const ourRows = await countRows(deps.db.pool, `${deps.db.viewsSchema}.transfer`, "block_number BETWEEN $1 AND $2", [
    firstBlock,
    lastBlock,
  ]);
  const baseRows = await countRows(basePool, `${BASELINE_SCHEMA}.transfer`, "block_number BETWEEN $1 AND $2", [firstBlock, lastBlock]);
  const registered = await countRows(deps.db.pool, "watched_addresses");

  const lat = (f: (p: Tracked) => number | undefined) =>
    tracked.flatMap((p) => (p.t0 !== undefined && f(p) !== undefined ? [f(p)! - p.t0] : []));
  const ourRowLat = lat((p) => p.ourRow);
  const baseRowLat = lat((p) => p.baseRow);
  const paidLat = lat((p) => p.paidSeen);
  const paidAtLat = lat((p) => p.paidAt);
  const completedLat = lat((p) => p.completedAt);
  const lagOurs = lag.map((l) => l.ours);
  const lagBase = lag.map((l) => l.baseline);
  // The lag's course: the highest sample of every 10 s of the window.
  const course = (f: (l: (typeof lag)[number]) => number) => {
    const out: number[] = [];
    for (const l of lag) out[Math.floor(l.at / 10_000)] = Math.max(out[Math.floor(l.at / 10_000)] ?? 0, f(l));
    return out.join(" ");
  };

  console.log(
    `\n== mainnet volume: ${MINUTES} min measured (${elapsedS.toFixed(0)} s, blocks ${firstBlock}..${lastBlock}), chain ${CHAIN_ID}, 1 s blocks`,
  );
  console.log(
    `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; Ponder polling ${POLLING_MS} ms, ` +
      `RPC cache ${CACHE ? "on (as on a public chain)" : "off (as the local stack)"}`,
  );
  console.log(
    `load: ${spammers.length} token contracts x ${load.logsPerTx} foreign Transfer logs per block; logs per block in the window ` +
      `min ${Math.min(...perBlock)}, mean ${mean(perBlock).toFixed(0)}, max ${max(perBlock)} over ${perBlock.length}/${blocks} blocks ` +
      `(${load.stats().failedBatches} batches failed); ${paymentsSent} payments (one every ${PAY_EVERY_MS / 1000} s); ` +
      `${OPEN} open payments, ${registered} registered addresses`,
  );
  console.log(`\nindexer lag (blocks: chain head minus latest checkpoint, sampled every 250 ms):`);
  console.log(
    table([
      ["", "samples", "max", "p95", "p50", "mean", "caught up after load stopped"],
      ["ours", lagOurs.length, max(lagOurs), pct(lagOurs, 0.95), pct(lagOurs, 0.5), mean(lagOurs).toFixed(2), ms(caughtUp.ours)],
      [
        "baseline (Ponder alone)",
        lagBase.length,
        max(lagBase),
        pct(lagBase, 0.95),
        pct(lagBase, 0.5),
        mean(lagBase).toFixed(2),
        ms(caughtUp.baseline),
      ],
    ]),
  );
  console.log(`max lag per 10 s, ours:     ${course((l) => l.ours)}`);
  console.log(`max lag per 10 s, baseline: ${course((l) => l.baseline)}`);
  console.log(`\ndetection latency (ms from the block first seen on the node; rows and paid observed alike, LISTEN + 20 ms poll):`);
  const row = (name: string, xs: number[]) => [name, `${xs.length}/${tracked.length}`, pct(xs, 0.5), pct(xs, 0.95), max(xs)];
  console.log(
    table([
      ["", "n", "p50", "p95", "max"],
      row("baseline: block -> its Transfer row", baseRowLat),
      row("ours: block -> our Transfer row", ourRowLat),
      row("ours: block -> paid (observed)", paidLat),
      row("ours: block -> paid_at (detector's clock)", paidAtLat),
      row("ours: block -> completed_at (swept)", completedLat),
    ]),
  );
  console.log(`paid p95 - baseline row p95: ${pct(paidLat, 0.95) - pct(baseRowLat, 0.95)} ms (target <= 100 ms)`);
  console.log(
    `\ndatabase growth (pg_total_relation_size of each schema's tables, per indexed block, x 3600 = an hour of 1 s blocks; ` +
      `ours over blocks ${sizes0.ours.block}..${sizes1.ours.block}, baseline ${sizes0.baseline.block}..${sizes1.baseline.block}):`,
  );
  const sizeRows: (string | number)[][] = [["", "start", "end", "per hour"]];
  for (const [who, schemas] of [
    ["ours", ourSchemas],
    ["baseline", baseSchemas],
  ] as const)
    for (const s of schemas)
      sizeRows.push([
        `${who}: ${s === ours.schema ? `${s} (our Ponder's tables)` : s}`,
        bytes(sizes0[who].bytes[s]!),
        bytes(sizes1[who].bytes[s]!),
        bytes(perHour(who, s)),
      ]);
  for (const [who, schemas] of [
    ["ours", ourSchemas],
    ["baseline", baseSchemas],
  ] as const)
    sizeRows.push([`${who}: total`, "", "", bytes(schemas.reduce((a, s) => a + perHour(who, s), 0))]);
  console.log(table(sizeRows));
  console.log(`transfer rows stored for the window's blocks: ours ${ourRows}, baseline ${baseRows}`);
  const syncRows = (x: Awaited<ReturnType<typeof syncStoreRows>>) => `${x.logs} logs, ${x.blocks} blocks, ${x.transactions} transactions`;
  console.log(`ponder_sync live rows at the end: ours ${syncRows(syncEnd.ours)}; baseline ${syncRows(syncEnd.baseline)}`);
  console.log(
    `\nprocesses (CPU: 100 % = one core, averaged over the window; memory: peak PSS summed over the process tree, peak RSS of its main process):`,
  );
  console.log(
    table([
      ["", "CPU %", "PSS", "RSS", "processes"],
      ...procs.figures().map((f) => [f.name, f.cpuPercent.toFixed(1), bytes(f.maxPssBytes), bytes(f.maxRssBytes), f.processes]),
    ]),
  );
  console.log(`\nlogs: ${chain.dataDir}/{ponder,baseline-ponder,serve}.log`);

  /** Each database's schema sizes with the block its indexer had indexed just before. */
  async function measureSizes() {
    const [oursBlock, baseBlock] = await Promise.all([
      indexedBlock(deps.db.pool, ours.schema, CHAIN_ID),
      indexedBlock(basePool, BASELINE_SCHEMA, CHAIN_ID),
    ]);
    return {
      ours: { block: oursBlock ?? 0, bytes: await schemaSizes(deps.db.pool, ourSchemas) },
      baseline: { block: baseBlock ?? 0, bytes: await schemaSizes(basePool, baseSchemas) },
    };
  }
}

async function waitTx(hash: Hex): Promise<number> {
  for (;;) {
    const r = await rpc<{ status: Hex; blockNumber: Hex } | null>(chain.rpcUrl, "eth_getTransactionReceipt", [hash]);
    if (r) {
      if (r.status !== "0x1") throw new Error(`transaction ${hash} reverted`);
      return Number(r.blockNumber);
    }
    await sleep(10);
  }
}
