// Backfill: `--transfers` real token transfers to our registered payment addresses over `--blocks` blocks are
// mined first (automine off, one batch transaction and evm_mine per block), then the full pipeline (our Ponder +
// the detector) indexes the range from scratch until every payment is `paid`; then "Ponder alone"
// (bench/lib/baseline-ponder.ts) indexes the same range from scratch in a database of its own. One after the
// other, so each has the machine to itself. Prints seconds, rows/s and the ratio; asserts nothing.
//   npx tsx bench/backfill.ts [--transfers 10000] [--blocks 2000] [--chain 777177] [--cache on|off] [--polling 200]
import os from "node:os";
import pg from "pg";
import { encodeFunctionData, type Hex } from "viem";
import { logSpammerAbi } from "../abis/LogSpammer.js";
import { testTokenAbi } from "../abis/TestToken.js";
import { startApiServer } from "../api/server.js";
import { createDeps } from "../app/deps.js";
import { migrate } from "../db/migrate.js";
import { detector } from "../processors/detector.js";
import { startProcessors } from "../processors/runner.js";
import { startBaselinePonder } from "./lib/baseline-ponder.js";
import { benchLog, runBench, startBenchChain, startOurPonder } from "./lib/bench-stack.js";
import { deploySpammers, loaderSender, rpc, waitReceipts } from "./lib/load.js";
import { benchMerchant, bulkOpenPayments, createPayment } from "./lib/payments.js";
import { countRows, createDatabase, indexedBlock } from "./lib/ponder-db.js";
import { sampleProcesses, type RoleFigures } from "./lib/proc-stats.js";
import { options, sleep, table } from "./lib/stats.js";

const o = options({ transfers: "10000", blocks: "2000", chain: "777177", cache: "on", polling: "200", timeout: "360" });
const TRANSFERS = Number(o.transfers);
const BLOCKS = Number(o.blocks);
const CHAIN_ID = Number(o.chain);
const CACHE = o.cache !== "off";
const POLLING_MS = Number(o.polling);
const TIMEOUT_MS = Number(o.timeout) * 1000;

const sec = (ms: number) => (ms ? `${(ms / 1000).toFixed(1)} s` : "not seen");
const log = benchLog;

const chain = await startBenchChain({ name: "bench-backfill", chainId: CHAIN_ID, blockTime: 0 });
await runBench(chain, run);

async function run() {
  const deps = createDeps({ env: { ...chain.env, APP_SCHEMA: "app", HASH_SECRET: "bench-backfill-hash-secret" } });
  chain.onStop(() => deps.db.close());
  await migrate(deps.db);
  const api = await startApiServer(deps, 0);
  chain.onStop(() => api.close());
  const apiUrl = `http://127.0.0.1:${api.port}/api`;
  const active = deps.chains.find((c) => c.chainId === CHAIN_ID)!;
  const token = active.tokens.find((t) => t.symbol === "USDC")!;
  const merchant = await benchMerchant(deps.db);

  // One registered payment per transfer: a real one through the API, copied.
  const template = await createPayment(deps.db, {
    apiUrl,
    apiKey: merchant.key,
    chainId: CHAIN_ID,
    token: token.address,
    orderId: "template",
  });
  const addresses = await bulkOpenPayments(deps.db, template.id, TRANSFERS, { returning: true });
  log(`${addresses.length} open payments registered (due ${template.due} units of USDC each)`);

  // The range: one LogSpammer.transferMany per block, paying `perBlock` payments their due amount.
  const [batcher] = await deploySpammers(chain.rpcUrl, CHAIN_ID, 1);
  const sender = await loaderSender(chain.rpcUrl, CHAIN_ID);
  await waitReceipts(chain.rpcUrl, [
    await sender.send({
      to: token.address,
      data: encodeFunctionData({ abi: testTokenAbi, functionName: "mint", args: [batcher!, template.due * BigInt(TRANSFERS)] }),
      gas: 200_000n,
    }),
  ]);
  const perBlock = Math.ceil(TRANSFERS / BLOCKS);
  await rpc(chain.rpcUrl, "evm_setAutomine", [false]);
  const first = Number(await rpc<Hex>(chain.rpcUrl, "eth_blockNumber")) + 1;
  const hashes: Hex[] = [];
  let t = Date.now();
  for (let i = 0; i < TRANSFERS; i += perBlock) {
    const to = addresses.slice(i, i + perBlock) as Hex[];
    hashes.push(
      await sender.send({
        to: batcher!,
        data: encodeFunctionData({ abi: logSpammerAbi, functionName: "transferMany", args: [token.address, to, template.due] }),
        gas: 100_000n + 60_000n * BigInt(to.length),
      }),
    );
    await rpc(chain.rpcUrl, "evm_mine");
  }
  await waitReceipts(chain.rpcUrl, hashes);
  const last = Number(await rpc<Hex>(chain.rpcUrl, "eth_blockNumber"));
  // Ponder backfills up to the finalized block (head minus its finality count) and takes the rest block by block
  // as live blocks: empty blocks on top make the whole range final, so both indexers backfill all of it whenever
  // they start. From there a live chain again, as Ponder will find it.
  await rpc(chain.rpcUrl, "anvil_mine", [`0x${(ponderFinality(CHAIN_ID) + 10).toString(16)}`]);
  await rpc(chain.rpcUrl, "evm_setIntervalMining", [1]);
  log(`mined ${TRANSFERS} transfers in blocks ${first}..${last} in ${((Date.now() - t) / 1000).toFixed(1)} s`);

  // Full pipeline: our Ponder from the deployment block, and the detector.
  t = Date.now();
  const processors = startProcessors(deps, [detector()], () => {});
  const ours = await startOurPonder(chain, { cache: CACHE, pollingMs: POLLING_MS });
  const oursProcs = sampleProcesses(
    [
      { name: "anvil", pid: chain.anvil.process.pid!, tree: true },
      { name: "postgres (all backends)", pid: chain.postgresPid, tree: true },
      { name: "our ponder", pid: ours.process.pid!, tree: true },
      { name: "bench driver (detector, polling)", pid: process.pid, tree: false },
    ],
    1000,
  );
  let oursIndexed = 0;
  let oursPaid = 0;
  let oursReady = 0;
  for (;;) {
    const elapsed = Date.now() - t;
    if (!oursReady && (await fetch(`${ours.url}/ready`).catch(() => null))?.status === 200) oursReady = elapsed;
    if (!oursIndexed && ((await indexedBlock(deps.db.pool, ours.schema, CHAIN_ID)) ?? 0) >= last) oursIndexed = elapsed;
    const paid = await countRows(deps.db.pool, "payments", "order_id LIKE 'bench-open-%' AND status = 'paid'");
    if (paid >= TRANSFERS) {
      oursPaid = elapsed;
      break;
    }
    if (elapsed > TIMEOUT_MS) throw new Error(`full pipeline: ${paid}/${TRANSFERS} paid after ${elapsed} ms`);
    if (ours.process.exitCode !== null) throw new Error(`our ponder exited (see ${chain.dataDir}/ponder.log)`);
    await sleep(100);
  }
  const oursRows = await countRows(deps.db.pool, `${deps.db.viewsSchema}.transfer`, "block_number BETWEEN $1 AND $2", [first, last]);
  log(`full pipeline: indexed in ${oursIndexed} ms, all paid in ${oursPaid} ms`);
  oursProcs.stop();
  await processors.stop();
  await ours.stop();

  // Ponder alone, the same range from scratch, in a database of its own.
  const baselineUrl = await createDatabase(chain.databaseUrl, "baseline");
  const basePool = new pg.Pool({ connectionString: baselineUrl, max: 2 });
  chain.onStop(() => basePool.end());
  t = Date.now();
  const baseline = await startBaselinePonder({
    dir: `${chain.dataDir}/baseline-ponder`,
    databaseUrl: baselineUrl,
    chainId: CHAIN_ID,
    rpcUrl: chain.rpcUrl,
    startBlock: chain.deployment.startBlock,
    pollingMs: POLLING_MS,
    cache: CACHE,
    schema: "baseline",
    viewsSchema: "baseline_views",
    logFile: `${chain.dataDir}/baseline-ponder.log`,
  });
  chain.onStop(() => baseline.stop());
  const baseProcs = sampleProcesses(
    [
      { name: "anvil", pid: chain.anvil.process.pid!, tree: true },
      { name: "postgres (all backends)", pid: chain.postgresPid, tree: true },
      { name: "baseline ponder", pid: baseline.process.pid!, tree: true },
    ],
    1000,
  );
  let baseIndexed = 0;
  let baseReady = 0;
  for (;;) {
    const elapsed = Date.now() - t;
    if (!baseReady && (await fetch(`${baseline.url}/ready`).catch(() => null))?.status === 200) baseReady = elapsed;
    if (!baseIndexed && ((await indexedBlock(basePool, "baseline", CHAIN_ID)) ?? 0) >= last) baseIndexed = elapsed;
    if (baseIndexed && baseReady) break;
    if (elapsed > TIMEOUT_MS) throw new Error(`baseline not at block ${last} after ${elapsed} ms`);
    if (baseline.process.exitCode !== null) throw new Error(`baseline ponder exited (see ${chain.dataDir}/baseline-ponder.log)`);
    await sleep(100);
  }
  baseProcs.stop();
  const baseRows = await countRows(basePool, "baseline.transfer", "block_number BETWEEN $1 AND $2", [first, last]);
  log(`baseline: indexed in ${baseIndexed} ms`);

  const rate = (rows: number, ms: number) => (rows / (ms / 1000)).toFixed(0);
  console.log(
    `\n== backfill: ${TRANSFERS} transfers to registered payment addresses over ${last - first + 1} blocks (${first}..${last}), chain ${CHAIN_ID}`,
  );
  console.log(
    `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; Ponder polling ${POLLING_MS} ms, RPC cache ${CACHE ? "on" : "off"}; ` +
      `times from starting the Ponder process (build, schema setup and backfill), each run alone`,
  );
  console.log(
    table([
      ["", "seconds", "rows", "rows/s", "ready (/ready 200)"],
      ["baseline (Ponder alone): range indexed", (baseIndexed / 1000).toFixed(1), baseRows, rate(baseRows, baseIndexed), sec(baseReady)],
      ["ours: range indexed (our Ponder)", (oursIndexed / 1000).toFixed(1), oursRows, rate(oursRows, oursIndexed), sec(oursReady)],
      ["ours: every payment paid (Ponder + detector)", (oursPaid / 1000).toFixed(1), TRANSFERS, rate(TRANSFERS, oursPaid), ""],
    ]),
  );
  console.log(
    `ratio to the baseline: indexed ${(oursIndexed / baseIndexed).toFixed(2)}, all paid ${(oursPaid / baseIndexed).toFixed(2)} (time, ours / baseline)`,
  );
  const cpu = (figures: RoleFigures[]) => figures.map((f) => `${f.name} ${f.cpuPercent.toFixed(0)} %`).join(", ");
  console.log(`CPU while indexing (100 % = one core): full pipeline: ${cpu(oursProcs.figures())}`);
  console.log(`                                       baseline: ${cpu(baseProcs.figures())}`);
  console.log(`logs: ${chain.dataDir}/{ponder,baseline-ponder}.log`);
}

/** Ponder 0.16's finality block counts (ponder/dist/esm/utils/finality.js). */
function ponderFinality(chainId: number): number {
  if ([1, 3, 4, 5, 42, 11155111].includes(chainId)) return 65;
  if ([137, 80001].includes(chainId)) return 200;
  if ([42161, 42170, 421611, 421613].includes(chainId)) return 240;
  return 30;
}
