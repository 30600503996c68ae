import { formatEther, type Block } from "viem";
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
  priceAge,
  priceAvailable,
  pricePushLast,
  rpcHeadLag,
  rpcProviderInUse,
  rpcProviderState,
  scrapeSourceUp,
  settlementOldestUnsettled,
  settlerBalance,
  signerBalanceWei,
  signerRunwayBlocks,
  txAtFeeCapNow,
  txOldestPending,
  webhookQueueDue,
  webhookQueueOldestDue,
  webhookQueuePending,
  withdrawRequestOldestSeconds,
} from "../../core/metrics.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { nativePriceStates, pushStates } from "../pricing/index.js";
import { settlementBacklog, signerRunways } from "../settlement/index.js";

// The gauges of shared state, read when /metrics is scraped rather than kept by any one process: every process
// that serves /metrics reports the same values (aggregate them with max() in PromQL). Each source is bounded by
// SOURCE_TIMEOUT_MS and reported in chainpay_metrics_source_up; a source that fails leaves its gauges empty
// (or 0) instead of stale. Cost per scrape: eight queries, the head of each chain (read once, shared) and one balance
// per signer and chain.

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

/** Each chain's latest block, read once per scrape by whichever source asks first (null: the RPC did not answer). */
type Heads = (chainId: number) => Promise<Block | null>;
function headsOnce(deps: AppDeps): Heads {
  const read = new Map<number, Promise<Block | null>>();
  return (chainId) => {
    let p = read.get(chainId);
    if (!p) {
      const client = deps.clients.get(chainId)!;
      read.set(chainId, (p = client.getBlock({ blockTag: "latest" }).catch(() => null)));
    }
    return p;
  };
}

/** Indexed block, chain head and lag (blocks, and chain time as GET /health measures it), per chain. */
async function indexer(deps: AppDeps, heads: Heads) {
  const progress = await indexerProgress(deps.db);
  if (!progress) throw new Error("indexer views not published");
  indexerBlock.reset();
  for (const p of progress) indexerBlock.labels(String(p.chainId)).set(p.indexedBlock);
  for (const chain of deps.chains) {
    const id = String(chain.chainId);
    const p = progress.find((x) => x.chainId === chain.chainId);
    const head = await heads(chain.chainId);
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

/**
 * Every signer's native balance and runway per chain (modules/settlement/signer-runway.ts, the numbers GET /api/health
 * judges), and the settler's balance in whole coins: one balance read per signer and chain. Only where a key (or
 * remote signer) is configured. A chain whose head or balance does not answer loses its series (not stale values).
 */
async function signers(deps: AppDeps, heads: Heads) {
  const known = new Map<number, bigint>();
  await Promise.all(
    deps.chains.map(async (chain) => {
      const block = await heads(chain.chainId);
      if (block?.number != null) known.set(chain.chainId, block.number);
    }),
  );
  for (const r of await signerRunways(deps, { heads: known })) {
    const id = String(r.chainId);
    const labels = { chain_id: id, signer: r.signer };
    const settler = r.roles.includes("settler");
    if (r.balanceWei === null) {
      signerBalanceWei.remove(labels);
      signerRunwayBlocks.remove(labels);
      if (settler) settlerBalance.remove(id);
      continue;
    }
    // A float only here, for the exposition format (53 bits of precision: ample for a gauge; sums stay bigint).
    signerBalanceWei.set(labels, Number(r.balanceWei));
    if (settler) settlerBalance.labels(id).set(Number(formatEther(r.balanceWei)));
    if (r.spentWei === null) signerRunwayBlocks.remove(labels);
    else signerRunwayBlocks.set(labels, r.runwayBlocks === null ? Infinity : Number(r.runwayBlocks));
  }
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

/** Each chain's native coin price: its age and whether a quote could use it now. */
async function prices(deps: AppDeps) {
  const states = await nativePriceStates(deps);
  priceAge.reset();
  priceAvailable.reset();
  for (const p of states) {
    priceAvailable.labels(String(p.chainId), p.symbol).set(p.status === "ok" ? 1 : 0);
    if (p.status === "ok" && p.updatedAt && p.source)
      priceAge.labels(String(p.chainId), p.symbol, p.source).set(Math.max(0, (deps.now() - p.updatedAt.getTime()) / 1000));
  }
  pricePushLast.reset();
  if (deps.config.PRICE_PUSHER_PRIVATE_KEY)
    for (const p of await pushStates(deps)) if (p.lastPushAt) pricePushLast.labels(String(p.chainId)).set(p.lastPushAt.getTime() / 1000);
}

const PROVIDER_STATES = ["ok", "lagging", "rate_limited", "failing", "wrong_chain"] as const;

/** Each chain's providers, as this process's pool knows them after one fresh probe (chains/rpc-pool.ts). */
async function rpcProviders(deps: AppDeps) {
  const pools = [...(deps.rpcPools?.values() ?? [])];
  await Promise.all(pools.map((p) => p.probe()));
  rpcHeadLag.reset();
  rpcProviderState.reset();
  rpcProviderInUse.reset();
  for (const pool of pools) {
    const chain = String(pool.chainId);
    for (const p of pool.providers()) {
      if (p.lagBlocks !== null) rpcHeadLag.labels(chain, p.label).set(p.lagBlocks);
      for (const s of PROVIDER_STATES) rpcProviderState.labels(chain, p.label, s).set(p.state === s ? 1 : 0);
      rpcProviderInUse.labels(chain, p.label).set(p.inUse ? 1 : 0);
    }
  }
}

let inFlight: Promise<void> | null = null;

/** Sets the scrape-time gauges; concurrent scrapes share one read. */
export function refreshGauges(deps: AppDeps): Promise<void> {
  const heads = headsOnce(deps);
  inFlight ??= Promise.all([
    // Bounded like every source: a hanging provider's probe leaves what the pool knew before it.
    source(
      "rpc",
      () => rpcProviders(deps),
      () => {},
    ),
    source(
      "prices",
      () => prices(deps),
      () => {
        priceAge.reset();
        priceAvailable.reset();
        pricePushLast.reset();
      },
    ),
    source(
      "indexer",
      () => indexer(deps, heads),
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
      () => signers(deps, heads),
      () => [settlerBalance, signerBalanceWei, signerRunwayBlocks].forEach((g) => g.reset()),
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
