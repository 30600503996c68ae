import { Hono } from "hono";
import type { AppEnv } from "../context.js";
import { indexerProgress } from "../../db/indexer-status.js";

/** GET /health: the status of every component (database, each chain, indexer progress, processors). */
export const health = new Hono<AppEnv>().get("/health", async (c) => {
  const deps = c.var.deps;
  const t0 = Date.now();
  const database = await deps.db.pool
    .query("SELECT 1")
    .then(() => ({ ok: true, latencyMs: Date.now() - t0 }))
    .catch((e: Error) => ({ ok: false, error: e.message }));

  const chains = await Promise.all(
    deps.chains.map(async (chain) => {
      try {
        const block = await deps.clients.get(chain.chainId)!.getBlockNumber({ cacheTime: 0 });
        return { chainId: chain.chainId, name: chain.name, ok: true, latestBlock: Number(block) };
      } catch (e) {
        return { chainId: chain.chainId, name: chain.name, ok: false, error: (e as Error).message.split("\n")[0] };
      }
    }),
  );

  const progress = database.ok ? await indexerProgress(deps.db).catch(() => null) : null;
  const indexer = {
    ready: progress !== null,
    chains: deps.chains.map((chain) => {
      const p = progress?.find((x) => x.chainId === chain.chainId);
      const latest = chains.find((x) => x.chainId === chain.chainId)?.latestBlock;
      return {
        chainId: chain.chainId,
        indexedBlock: p?.indexedBlock ?? null,
        latestBlock: latest ?? null,
        lagBlocks: p && latest !== undefined ? Math.max(0, latest - p.indexedBlock) : null,
      };
    }),
  };

  const processors = database.ok
    ? (
        await deps.db.pool
          .query<{ key: string; updated_at: Date }>(`SELECT key, updated_at FROM processor_state WHERE key LIKE 'heartbeat:%'`)
          .catch(() => ({ rows: [] as { key: string; updated_at: Date }[] }))
      ).rows.map((r) => ({
        name: String(r.key).slice("heartbeat:".length),
        lastRunAt: new Date(r.updated_at).getTime(),
        ok: deps.now() - new Date(r.updated_at).getTime() < 120_000,
      }))
    : [];

  const ok = database.ok && chains.every((x) => x.ok) && indexer.ready;
  return c.json({ status: ok ? "ok" : "degraded", database, chains, indexer, processors }, ok ? 200 : 503);
});
