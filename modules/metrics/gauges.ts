import { formatEther, type Address } from "viem";
import type { AppDeps } from "../../core/deps.js";
import {
  chainHeadBlock,
  gasTankBalanceMicros,
  gasTankMerchants,
  indexerBlock,
  indexerLagBlocks,
  indexerLagSeconds,
  paymentsAwaitingGas,
  paymentsWithdrawRequests,
  scrapeSourceUp,
  settlementOldestUnsettled,
  settlerBalance,
  txAtFeeCapNow,
  txOldestPending,
  webhookQueueDue,
  webhookQueueOldestDue,
  webhookQueuePending,
  withdrawRequestOldestSeconds,
} from "../../core/metrics.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { settlementBacklog, settlerAccount } from "../settlement/index.js";

// The gauges of shared state, read when /metrics is scraped rather than kept by any one process: every process
// that serves /metrics reports the same values (aggregate them with max() in PromQL). Each source is bounded by
// SOURCE_TIMEOUT_MS and reported in chainpay_metrics_source_up; a source that fails leaves its gauges empty
// (or 0) instead of stale. Cost per scrape: five aggregate queries and two RPC calls per chain.

const SOURCE_TIMEOUT_MS = 3_000;

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => (t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(t));
}

async function source(name: string, read: () => Promise<void>, reset: () => void) {
  try {
    await within(read(), SOURCE_TIMEOUT_MS);
    scrapeSourceUp.labels(name).set(1);
  } catch {
    reset();
    scrapeSourceUp.labels(name).set(0);
  }
}

/** Indexed block, chain head and lag (blocks, and chain time as GET /health measures it), per chain. */
async function indexer(deps: AppDeps) {
  const progress = await indexerProgress(deps.db);
  if (!progress) throw new Error("indexer views not published");
  indexerBlock.reset();
  for (const p of progress) indexerBlock.labels(String(p.chainId)).set(p.indexedBlock);
  for (const chain of deps.chains) {
    const id = String(chain.chainId);
    const p = progress.find((x) => x.chainId === chain.chainId);
    const head = await deps.clients
      .get(chain.chainId)!
      .getBlock({ blockTag: "latest" })
      .catch(() => null);
    if (!head) {
      chainHeadBlock.remove(id);
      indexerLagBlocks.remove(id);
      indexerLagSeconds.remove(id);
      continue;
    }
    chainHeadBlock.labels(id).set(Number(head.number));
    if (!p) continue;
    indexerLagBlocks.labels(id).set(Math.max(0, Number(head.number) - p.indexedBlock));
    indexerLagSeconds.labels(id).set(Math.max(0, Number(head.timestamp) - p.indexedAt / 1000));
  }
}

/** The webhook outbox: rows due and unclaimed, every unfinished row, and the wait of the oldest due one. */
async function webhookQueue(deps: AppDeps) {
  const { rows } = await deps.db.pool.query<{ due: number; pending: number; oldest: number | null }>(
    `SELECT count(*) FILTER (WHERE next_attempt_at <= $1)::int AS due, count(*)::int AS pending,
            extract(epoch FROM $1 - min(next_attempt_at) FILTER (WHERE next_attempt_at <= $1))::float8 AS oldest
       FROM webhook_deliveries WHERE status = 'pending'`,
    [new Date(deps.now())],
  );
  webhookQueueDue.set(rows[0]!.due);
  webhookQueuePending.set(rows[0]!.pending);
  webhookQueueOldestDue.set(Math.max(0, rows[0]!.oldest ?? 0));
}

/** Gas Tank totals (no per-merchant series: their number grows with the merchants) and the payments they hold up. */
async function gasTanks(deps: AppDeps) {
  const [tanks, waiting] = await Promise.all([
    deps.db.pool.query<{ total: string; positive: number; zero: number; negative: number }>(
      `SELECT COALESCE(sum(b), 0)::text AS total, count(*) FILTER (WHERE b > 0)::int AS positive,
              count(*) FILTER (WHERE b = 0)::int AS zero, count(*) FILTER (WHERE b < 0)::int AS negative
         FROM (SELECT sum(amount_micros) AS b FROM ledger_entries GROUP BY merchant_id) t`,
    ),
    deps.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE status = 'awaiting_gas'`),
  ]);
  const t = tanks.rows[0]!;
  // A float is exact for integers up to 2^53 micros (9 billion USDT).
  gasTankBalanceMicros.set(Number(t.total));
  gasTankMerchants.labels("positive").set(t.positive);
  gasTankMerchants.labels("zero").set(t.zero);
  gasTankMerchants.labels("negative").set(t.negative);
  paymentsAwaitingGas.set(waiting.rows[0]!.n);
}

/**
 * Withdraw requests the settler has not taken (modules/settlement/send.ts): their number and the wait of the oldest.
 * A count that grows, or an age past a few settler passes, means the settler is stopped or cannot sign.
 */
async function withdrawRequests(deps: AppDeps) {
  const { rows } = await deps.db.pool.query<{ n: number; oldest: number | null }>(
    `SELECT count(*)::int AS n, extract(epoch FROM $1 - min(updated_at))::float8 AS oldest FROM payments WHERE status = 'withdraw_request'`,
    [new Date(deps.now())],
  );
  paymentsWithdrawRequests.set(rows[0]!.n);
  withdrawRequestOldestSeconds.set(Math.max(0, rows[0]!.oldest ?? 0));
}

/** The settler's native balance per chain: it pays the gas of every sweep. Only where SETTLER_PRIVATE_KEY is set. */
const settlerAddresses = new Map<string, Address>();
async function settler(deps: AppDeps) {
  const key = deps.config.SETTLER_PRIVATE_KEY ?? deps.config.SIGNER_ADDRESS;
  if (!key) return;
  let address = settlerAddresses.get(key);
  if (!address) settlerAddresses.set(key, (address = settlerAccount(deps).address));
  await Promise.all(
    deps.chains.map(async (chain) => {
      const wei = await deps.clients.get(chain.chainId)!.getBalance({ address });
      settlerBalance.labels(String(chain.chainId)).set(Number(formatEther(wei)));
    }),
  );
}

/** What waits for settlement per chain (modules/settlement/backlog.ts, the same numbers as GET /api/health). */
async function settlementWaits(deps: AppDeps) {
  const backlog = await settlementBacklog(deps.db.pool);
  const age = (d: Date | null | undefined) => (d ? Math.max(0, deps.now() - d.getTime()) / 1000 : 0);
  for (const chain of deps.chains) {
    const b = backlog.get(chain.chainId);
    const id = String(chain.chainId);
    settlementOldestUnsettled.labels(id).set(age(b?.oldestPaidAt));
    txOldestPending.labels(id).set(age(b?.oldestPendingAt));
    txAtFeeCapNow.labels(id).set(b?.atFeeCap ? 1 : 0);
  }
}

let inFlight: Promise<void> | null = null;

/** Sets the scrape-time gauges; concurrent scrapes share one read. */
export function refreshGauges(deps: AppDeps): Promise<void> {
  inFlight ??= Promise.all([
    source(
      "indexer",
      () => indexer(deps),
      () => {
        indexerBlock.reset();
        chainHeadBlock.reset();
        indexerLagBlocks.reset();
        indexerLagSeconds.reset();
      },
    ),
    source(
      "webhook_queue",
      () => webhookQueue(deps),
      () => {
        webhookQueueDue.reset();
        webhookQueuePending.reset();
        webhookQueueOldestDue.reset();
      },
    ),
    source(
      "gas_tank",
      () => gasTanks(deps),
      () => {
        gasTankBalanceMicros.reset();
        gasTankMerchants.reset();
        paymentsAwaitingGas.reset();
      },
    ),
    source(
      "withdrawals",
      () => withdrawRequests(deps),
      () => {
        paymentsWithdrawRequests.reset();
        withdrawRequestOldestSeconds.reset();
      },
    ),
    source(
      "settler",
      () => settler(deps),
      () => settlerBalance.reset(),
    ),
    source(
      "settlement",
      () => settlementWaits(deps),
      () => [settlementOldestUnsettled, txOldestPending, txAtFeeCapNow].forEach((g) => g.reset()),
    ),
  ])
    .then(
      () => {},
      () => {},
    )
    .finally(() => (inFlight = null));
  return inFlight;
}
