// Time from a payment's block to `paid` (and to `completed`) in the API, against the indexer's own
// latency (block -> Transfer row) measured in the same run as the baseline.
//   npx tsx bench/payment-latency.ts [payments=10] [chainId=777177]
import path from "node:path";
import { eq } from "drizzle-orm";
import { createPublicClient, createWalletClient, http, parseEther, parseUnits, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testTokenAbi } from "../abis/TestToken.js";
import { startApiServer } from "../api/server.js";
import { migrate } from "../db/migrate.js";
import { viemChain } from "../chains/clients.js";
import { createDeps } from "../core/deps.js";
import { createApiKey, createMerchant } from "../modules/merchants/merchants.js";
import { startStack } from "../local/stack.js";
import { allProcessors } from "../processors/index.js";
import { startProcessors } from "../processors/runner.js";

const N = Number(process.argv[2] ?? 10);
const CHAIN_ID = Number(process.argv[3] ?? 777177);
const stack = await startStack({ dataDir: path.resolve(".data/bench"), fresh: true, chainIds: [CHAIN_ID], blockTime: 0.5 });
await stack.ponder!.waitReady();
const deps = createDeps({ env: { ...process.env, ...stack.env } });
await migrate(deps.db);
const api = await startApiServer(deps, 0);
const processors = startProcessors(deps, allProcessors(), () => {});
const merchant = await createMerchant(deps.db, { name: "bench" });
const key = (await createApiKey(deps.db, merchant.id)).key;
const chain = deps.chains[0]!;
const usdt = chain.tokens.find((t) => t.symbol === "USDC")!;
const pub = createPublicClient({ chain: viemChain(chain), transport: http(chain.rpcUrl) });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const q = async (sql: string, args: unknown[]) => (await deps.db.pool.query(sql, args)).rows[0];
const { transfer } = deps.db.views;
const indexed: number[] = [];
const paid: number[] = [];
const completed: number[] = [];
for (let i = 0; i < N; i++) {
  const res = await fetch(`http://127.0.0.1:${api.port}/api/payments`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      chainId: String(CHAIN_ID),
      token: usdt.address,
      amount: "1",
      gasless: true,
      orderId: `bench-${i}`,
    }),
  });
  const id = ((await res.json()) as { url: string }).url.split("/pay/")[1]!;
  const { recipient_address: to } = await q(`SELECT recipient_address FROM payments WHERE id = $1`, [id]);
  const payer = privateKeyToAccount(generatePrivateKey());
  await pub.request({ method: "anvil_setBalance" as any, params: [payer.address, `0x${parseEther("10").toString(16)}`] as any });
  const wallet = createWalletClient({ chain: viemChain(chain), transport: http(chain.rpcUrl), account: payer });
  await pub.waitForTransactionReceipt({
    hash: await wallet.writeContract({
      address: usdt.address,
      abi: testTokenAbi,
      functionName: "mint",
      args: [payer.address, parseUnits("1", 6)],
    }),
    pollingInterval: 20,
  });
  const hash = await wallet.writeContract({
    address: usdt.address,
    abi: testTokenAbi,
    functionName: "transfer",
    args: [to as Address, parseUnits("1", 6)],
  });
  const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  const block = await pub.getBlock({ blockNumber: receipt.blockNumber });
  // Anvil stamps whole seconds; the moment we saw the receipt is the sharper start.
  const t0 = Date.now();
  let tIndexed = 0,
    tPaid = 0;
  for (;;) {
    const now = Date.now();
    if (!tIndexed && (await deps.db.orm.select({ id: transfer.id }).from(transfer).where(eq(transfer.transactionHash, hash))).length)
      tIndexed = now;
    const p = await q(`SELECT status, paid_at FROM payments WHERE id = $1`, [id]);
    if (!tPaid && p.paid_at) tPaid = p.paid_at.getTime();
    if (p.status === "completed") {
      completed.push(now - t0);
      break;
    }
    if (now - t0 > 120_000) throw new Error(`payment ${id} not completed`);
    await sleep(10);
  }
  indexed.push(tIndexed - t0);
  paid.push(tPaid - t0);
  void block;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))]!;
console.log(
  `payments: ${N} (chain ${CHAIN_ID}, 0.5 s blocks, Ponder polling 200 ms, detector every 200 ms on indexed-block change, settler every 250 ms)`,
);
console.log(`baseline  block -> indexed transfer row: median ${median(indexed)} ms, p90 ${p90(indexed)} ms`);
console.log(
  `          block -> paid in the API:      median ${median(paid)} ms, p90 ${p90(paid)} ms  (ratio to baseline ${(median(paid) / Math.max(1, median(indexed))).toFixed(2)})`,
);
console.log(`          block -> completed (swept):    median ${median(completed)} ms, p90 ${p90(completed)} ms`);
await processors.stop();
await api.close();
await deps.db.close();
await stack.stop();
