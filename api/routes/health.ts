import { Hono } from "hono";
import type { AppEnv } from "../context.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { PAYOUT_ALERT_ATTEMPTS, payoutBacklog } from "../../modules/agents/index.js";
import { nativePriceStates, pushStates } from "../../modules/pricing/index.js";
import { settlementBacklog, signerIssue, signerRunways } from "../../modules/settlement/index.js";

/**
 * A processor is stuck when its last pass ended longer ago than its interval plus this grace: the longest
 * normal pass (the webhook dispatcher stops claiming after 30 s and then waits up to 30 s for its sends;
 * an RPC call that times out costs viem tens of seconds) fits in it with room to spare.
 */
export const PROCESSOR_GRACE_MS = 120_000;
/** The indexer is stuck on a chain when the block it has indexed is older than the chain's head by more than this. */
export const INDEXER_MAX_LAG_MS = 120_000;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

type Heartbeat = { key: string; value: { error?: string | null; intervalMs?: number } | null; updated_at: Date };

/**
 * GET /health: every component (database, each chain's head, indexer progress and lag, processors'
 * last passes). 200 `ok` when all are fine; 503 `degraded` with `issues` naming each failing one: the
 * database, a chain's RPC, the indexer not ready or more than INDEXER_MAX_LAG_MS behind a chain's head,
 * a processor with no pass for its interval + PROCESSOR_GRACE_MS, agent withdrawals that failed to send
 * PAYOUT_ALERT_ATTEMPTS times in a row (the payout wallet short of a token or of gas), a chain whose settlement waits
 * (a transaction at the fee cap, or an unmined transaction or unsettled paid payment older than SETTLEMENT_STALL_MS), a
 * signer whose native balance pays for fewer than SIGNER_RUNWAY_MIN_BLOCKS blocks at its last hour's spending, or is 0
 * while its transactions (the settler's: paid payments too) wait. A processor's last error is shown, but a
 * failed pass alone does not degrade (it is retried next interval; what it failed on shows as its own component).
 */
export const health = new Hono<AppEnv>().get("/health", async (c) => {
  const deps = c.var.deps;
  const issues: string[] = [];
  const t0 = Date.now();
  const database = await deps.db.pool
    .query("SELECT 1")
    .then(() => ({ ok: true as const, latencyMs: Date.now() - t0 }))
    .catch((e: Error) => ({ ok: false as const, error: e.message }));
  if (!database.ok) issues.push(`database: ${database.error}`);

  const heads = await Promise.all(
    deps.chains.map(async (chain) => {
      try {
        const block = await deps.clients.get(chain.chainId)!.getBlock({ blockTag: "latest" });
        return {
          chainId: chain.chainId,
          name: chain.name,
          ok: true,
          latestBlock: Number(block.number),
          at: Number(block.timestamp) * 1000,
        };
      } catch (e) {
        const error = (e as Error).message.split("\n")[0]!;
        issues.push(`chain ${chain.chainId}: ${error}`);
        return { chainId: chain.chainId, name: chain.name, ok: false, error };
      }
    }),
  );
  const chains = heads.map(({ at: _at, ...chain }) => chain);
  const rpc = await rpcProviders(deps, issues);
  // Each chain's native coin price, as a quote would get it now: unavailable means creations needing it answer 503.
  const prices = (await nativePriceStates(deps)).map((p) => {
    if (p.status === "unavailable") issues.push(`price ${p.chainId} ${p.symbol}: unavailable: ${p.error}`);
    return {
      chainId: p.chainId,
      symbol: p.symbol,
      ok: p.status !== "unavailable",
      status: p.status,
      source: p.source,
      priceUsd: p.priceUsd,
      updatedAt: p.updatedAt === null ? null : p.updatedAt.getTime(),
      ageS: p.updatedAt === null ? null : Math.max(0, Math.round((deps.now() - p.updatedAt.getTime()) / 1000)),
      error: p.error,
    };
  });

  // The price pusher's last mined push per chain with an own PriceOracle (null: no pusher configured).
  const pricePusher =
    deps.config.PRICE_PUSHER_PRIVATE_KEY && database.ok
      ? (await pushStates(deps).catch(() => [])).map((p) => ({
          chainId: p.chainId,
          lastPushAt: p.lastPushAt === null ? null : p.lastPushAt.getTime(),
          lastTxHash: p.lastTxHash,
          inFlight: p.open,
          lastError: p.error,
        }))
      : null;

  const progress = database.ok ? await indexerProgress(deps.db).catch(() => null) : null;
  if (!progress) issues.push("indexer: not ready (its views are not published)");
  const indexer = {
    ready: progress !== null,
    maxLagMs: INDEXER_MAX_LAG_MS,
    chains: deps.chains.map((chain) => {
      const p = progress?.find((x) => x.chainId === chain.chainId);
      const head = heads.find((x) => x.chainId === chain.chainId);
      const latest = head?.latestBlock;
      // Lag in chain time (head's timestamp - indexed block's), so an idle chain or a moved test clock reads right.
      const lagMs = p && head?.at !== undefined ? Math.max(0, head.at - p.indexedAt) : null;
      const ok = lagMs !== null && lagMs <= INDEXER_MAX_LAG_MS;
      if (progress && !p) issues.push(`indexer ${chain.chainId}: no progress reported for this chain`);
      if (p && lagMs !== null && !ok)
        issues.push(
          `indexer ${chain.chainId}: block ${p.indexedBlock} is ${Math.round(lagMs / 1000)} s behind the chain head (bound ${INDEXER_MAX_LAG_MS / 1000} s)`,
        );
      return {
        chainId: chain.chainId,
        indexedBlock: p?.indexedBlock ?? null,
        latestBlock: latest ?? null,
        lagBlocks: p && latest !== undefined ? Math.max(0, latest - p.indexedBlock) : null,
        lagMs,
        ok,
      };
    }),
  };

  const beats = database.ok
    ? (
        await deps.db.pool
          .query<Heartbeat>(`SELECT key, value, updated_at FROM processor_state WHERE key LIKE 'heartbeat:%' ORDER BY key`)
          .catch(() => ({ rows: [] as Heartbeat[] }))
      ).rows
    : [];
  const processors = beats.map((r) => {
    const name = r.key.slice("heartbeat:".length);
    const lastRunAt = new Date(r.updated_at).getTime();
    // The runner records each processor's interval with its heartbeat (none: a runner from before it did).
    const intervalMs = typeof r.value?.intervalMs === "number" ? r.value.intervalMs : 0;
    const staleAfterMs = intervalMs + PROCESSOR_GRACE_MS;
    const age = deps.now() - lastRunAt;
    const ok = age <= staleAfterMs;
    if (!ok) issues.push(`processor ${name}: no pass for ${Math.round(age / 1000)} s (bound ${staleAfterMs / 1000} s)`);
    return { name, lastRunAt, ok, staleAfterMs, lastError: r.value?.error ?? null };
  });

  // A payout processor that runs but cannot pay: its passes succeed, the money does not move.
  const backlog = database.ok ? await payoutBacklog(deps.db.pool).catch(() => null) : null;
  const agentPayouts = backlog && { ...backlog, ok: backlog.stuck === 0 };
  if (backlog && backlog.stuck > 0)
    issues.push(
      `agent-payouts: ${backlog.stuck} withdrawal(s) failed to send ${PAYOUT_ALERT_ATTEMPTS}+ times: ${backlog.lastError ?? "unknown"}`,
    );

  // Settlement that waits: a transaction not mined (priced out, at the fee cap), or paid payments not swept; and the
  // gas each signer has left (the heads read above; a chain that did not answer is not asked again).
  const headBlocks = new Map(heads.flatMap((h) => (h.ok ? [[h.chainId, BigInt(h.latestBlock!)] as const] : [])));
  const [waiting, runways] = database.ok
    ? await Promise.all([settlementBacklog(deps.db.pool).catch(() => null), signerRunways(deps, { heads: headBlocks }).catch(() => null)])
    : [null, null];
  const stallMs = deps.config.SETTLEMENT_STALL_MS;
  const minBlocks = deps.config.SIGNER_RUNWAY_MIN_BLOCKS;
  const settlement =
    waiting &&
    deps.chains.map((chain) => {
      const b = waiting.get(chain.chainId);
      const age = (d: Date | null | undefined) => (d ? Math.max(0, deps.now() - d.getTime()) : null);
      const pendingAgeMs = age(b?.oldestPendingAt);
      const unsettledAgeMs = age(b?.oldestPaidAt);
      const chainIssues = [
        b?.atFeeCap && `a transaction waits at the fee cap (MAX_FEE_PER_GAS_GWEI_${chain.chainId})`,
        pendingAgeMs !== null && pendingAgeMs > stallMs && `oldest unmined transaction signed ${Math.round(pendingAgeMs / 1000)} s ago`,
        unsettledAgeMs !== null &&
          unsettledAgeMs > stallMs &&
          `${b!.unsettledPayments} paid payment(s) not settled, the oldest for ${Math.round(unsettledAgeMs / 1000)} s`,
      ].filter((x): x is string => Boolean(x));
      const signers =
        runways &&
        runways
          .filter((r) => r.chainId === chain.chainId)
          .map((r) => {
            // The settler's work includes the paid payments it has not signed a sweep for yet.
            const unsettledPayments = r.roles.includes("settler") ? (b?.unsettledPayments ?? 0) : 0;
            const issue = signerIssue(r, { minBlocks, unsettledPayments });
            if (issue) chainIssues.push(issue);
            return {
              address: r.signer,
              roles: r.roles,
              balanceWei: r.balanceWei?.toString() ?? null,
              spentWei: r.spentWei?.toString() ?? null,
              spendBlocks: Number(r.spendBlocks),
              // Blocks, not wei: a number (a runway past 2^53 blocks is shown as that, it lasts indefinitely anyway).
              runwayBlocks: r.runwayBlocks === null ? null : Number(r.runwayBlocks > MAX_SAFE ? MAX_SAFE : r.runwayBlocks),
              pendingTransactions: r.pendingTransactions,
              ok: !issue,
            };
          });
      for (const i of chainIssues) issues.push(`settlement ${chain.chainId}: ${i}`);
      return {
        chainId: chain.chainId,
        ok: chainIssues.length === 0,
        pendingTransactions: b?.pendingTransactions ?? 0,
        oldestPendingAgeMs: pendingAgeMs,
        atFeeCap: b?.atFeeCap ?? false,
        unsettledPayments: b?.unsettledPayments ?? 0,
        oldestUnsettledAgeMs: unsettledAgeMs,
        signers,
      };
    });

  const ok = issues.length === 0;
  return c.json(
    { status: ok ? "ok" : "degraded", issues, database, chains, rpc, prices, pricePusher, indexer, processors, agentPayouts, settlement },
    ok ? 200 : 503,
  );
});

/** How long health waits for a fresh read of every provider's head before it shows what the pool last knew. */
const PROBE_WAIT_MS = 2_000;

/**
 * Each chain's JSON-RPC providers as this process's pool sees them (chains/rpc-pool.ts): a provider that is not `ok`
 * (lagging, rate_limited, failing, wrong_chain) is an issue naming it, even while another serves the chain.
 */
async function rpcProviders(deps: AppEnv["Variables"]["deps"], issues: string[]) {
  const pools = deps.rpcPools;
  if (!pools) return null;
  await Promise.race([Promise.all([...pools.values()].map((p) => p.probe())), new Promise((r) => setTimeout(r, PROBE_WAIT_MS).unref())]);
  return deps.chains.map((chain) => {
    const providers = pools.get(chain.chainId)?.providers() ?? [];
    for (const p of providers.filter((x) => x.state !== "ok")) {
      const why =
        p.state === "lagging"
          ? `${p.lagBlocks} blocks behind the other providers`
          : p.state === "wrong_chain"
            ? (p.lastError ?? "answers for another chain")
            : `${p.lastError ?? p.state}${p.until ? ` (left alone until ${new Date(p.until).toISOString()})` : ""}`;
      issues.push(`rpc ${chain.chainId} provider ${p.label}: ${p.state}: ${why}`);
    }
    return {
      chainId: chain.chainId,
      ok: providers.every((p) => p.state === "ok"),
      providers: providers.map((p) => ({
        provider: p.label,
        state: p.state,
        inUse: p.inUse,
        head: p.head === null ? null : Number(p.head),
        lagBlocks: p.lagBlocks,
        latencyMs: p.latencyMs,
        requests: p.requests,
        errors: p.errors,
        lastError: p.lastError,
        until: p.until === null ? null : new Date(p.until).toISOString(),
      })),
    };
  });
}
