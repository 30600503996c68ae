// Time from a payment's block to `paid` (and to `completed`) against the indexer's own latency
// (block -> its Transfer row visible) measured in the same run as the baseline, with `open` other
// open payments in the database (detection should not care how many).
//   npx tsx bench/payment-latency.ts [payments=30] [chainId=777177] [open=1000]
import path from "node:path";
import pg from "pg";
import { createPublicClient, createWalletClient, getAddress, http, parseEther, parseUnits, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testTokenAbi } from "../abis/TestToken.js";
import { startApiServer } from "../api/server.js";
import { migrate } from "../db/migrate.js";
import { viemChain } from "../chains/clients.js";
import { createDeps } from "../app/deps.js";
import { createApiKey, createMerchant } from "../modules/merchants/index.js";
import { startStack } from "../local/stack.js";
import { allProcessors } from "../processors/index.js";
import { startProcessors } from "../processors/runner.js";

const N = Number(process.argv[2] ?? 30);
const CHAIN_ID = Number(process.argv[3] ?? 777177);
const OPEN = Number(process.argv[4] ?? 1000);
const BLOCK_TIME = 0.5;
const stack = await startStack({ dataDir: path.resolve(".data/bench"), fresh: true, chainIds: [CHAIN_ID], blockTime: BLOCK_TIME });
await stack.ponder!.waitReady();
const deps = createDeps({ env: { ...process.env, ...stack.env } });
await migrate(deps.db);
const api = await startApiServer(deps, 0);
const processors = startProcessors(deps, allProcessors(), () => {});
const merchant = await createMerchant(deps.db, { name: "bench" });
const key = (await createApiKey(deps.db, merchant.id)).key;
const chain = deps.chains[0]!;
const token = chain.tokens.find((t) => t.symbol === "USDC")!;
const pub = createPublicClient({ chain: viemChain(chain), transport: http(chain.rpcUrl) });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const q = async (sql: string, args: unknown[]) => (await deps.db.pool.query(sql, args)).rows[0];

async function createPayment(orderId: string): Promise<{ id: string; to: Address }> {
  const res = await fetch(`http://127.0.0.1:${api.port}/api/payments`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      chainId: String(CHAIN_ID),
      token: token.address,
      amount: "1",
      gasless: true,
      orderId,
    }),
  });
  const id = ((await res.json()) as { url: string }).url.split("/pay/")[1]!;
  const { recipient_address: to } = await q(`SELECT recipient_address FROM payments WHERE id = $1`, [id]);
  return { id, to };
}

// Other open payments: copies of a real one with fresh ids and addresses nobody pays.
if (OPEN > 0) {
  const template = await createPayment("bench-template");
  const addresses = Array.from({ length: OPEN }, () => getAddress(privateKeyToAccount(generatePrivateKey()).address));
  await deps.db.pool.query(
    `INSERT INTO payments
     SELECT r.* FROM payments p, unnest($2::text[]) WITH ORDINALITY AS a(address, n),
       LATERAL jsonb_populate_record(NULL::payments, to_jsonb(p) || jsonb_build_object(
         'id', gen_random_uuid(), 'recipient_address', a.address, 'order_id', 'bench-open-' || a.n)) AS r
     WHERE p.id = $1`,
    [template.id, addresses],
  );
}

// Ponder's own latency: the moment its commit's notification arrives with the row visible
// (Ponder NOTIFYs `<views>_live_query` in the block's transaction), polled as well every 10 ms.
const rowSeen = new Map<Hex, number>();
const watching = new Set<Hex>();
const lookRows = async (at: number) => {
  if (!watching.size) return;
  const hashes = [...watching];
  const { rows } = await deps.db.pool.query<{ h: Hex }>(
    `SELECT DISTINCT transaction_hash AS h FROM ${deps.db.viewsSchema}.transfer WHERE transaction_hash = ANY($1::text[])`,
    [hashes],
  );
  for (const { h } of rows) if (watching.delete(h)) rowSeen.set(h, at);
};
const listener = new pg.Client({ connectionString: stack.env.DATABASE_URL });
await listener.connect();
listener.on("notification", () => void lookRows(Date.now()));
await listener.query(`LISTEN "${deps.db.viewsSchema}_live_query"`);

const indexed: number[] = [];
const paid: number[] = [];
const completed: number[] = [];
for (let i = 0; i < N; i++) {
  const { id, to } = await createPayment(`bench-${i}`);
  const payer = privateKeyToAccount(generatePrivateKey());
  await pub.request({ method: "anvil_setBalance" as any, params: [payer.address, `0x${parseEther("10").toString(16)}`] as any });
  const wallet = createWalletClient({ chain: viemChain(chain), transport: http(chain.rpcUrl), account: payer });
  await pub.waitForTransactionReceipt({
    hash: await wallet.writeContract({
      address: token.address,
      abi: testTokenAbi,
      functionName: "mint",
      args: [payer.address, parseUnits("1", 6)],
    }),
    pollingInterval: 20,
  });
  const hash = await wallet.writeContract({
    address: token.address,
    abi: testTokenAbi,
    functionName: "transfer",
    args: [to, parseUnits("1", 6)],
  });
  watching.add(hash.toLowerCase() as Hex);
  await pub.waitForTransactionReceipt({ hash, pollingInterval: 10 });
  // Anvil stamps whole seconds; the moment we saw the receipt is the sharper start.
  const t0 = Date.now();
  let tPaid = 0;
  for (;;) {
    const now = Date.now();
    await lookRows(now);
    const p = await q(`SELECT status, paid_at FROM payments WHERE id = $1`, [id]);
    if (!tPaid && p.paid_at) tPaid = p.paid_at.getTime();
    if (p.status === "completed") {
      completed.push(now - t0);
      break;
    }
    if (now - t0 > 120_000) throw new Error(`payment ${id} not completed`);
    await sleep(10);
  }
  indexed.push(rowSeen.get(hash.toLowerCase() as Hex)! - t0);
  paid.push(tPaid - t0);
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const line = (what: string, xs: number[]) => `${what}p50 ${pct(xs, 0.5)} ms, p95 ${pct(xs, 0.95)} ms`;
console.log(
  `payments: ${N} (chain ${CHAIN_ID}, ${BLOCK_TIME} s blocks, ${OPEN} other open payments, Ponder polling ${stack.env.PONDER_POLLING_INTERVAL ?? 200} ms; ` +
    `detector woken by NOTIFY, fallback poll ${deps.config.DETECTOR_INTERVAL_MS} ms)`,
);
console.log(line("baseline  block -> Ponder's Transfer row:   ", indexed));
console.log(line("          block -> paid in the API:         ", paid));
console.log(
  `          paid / baseline: p50 ${(pct(paid, 0.5) / Math.max(1, pct(indexed, 0.5))).toFixed(2)}, ` +
    `p95 ${(pct(paid, 0.95) / Math.max(1, pct(indexed, 0.95))).toFixed(2)}; ` +
    `p95 difference ${pct(paid, 0.95) - pct(indexed, 0.95)} ms (target <= 100 ms)`,
);
console.log(line("          block -> completed (swept):       ", completed));
await listener.end();
await processors.stop();
await api.close();
await deps.db.close();
await stack.stop();
