import { afterAll, beforeAll, expect, it } from "vitest";
import { INDEXER_MAX_LAG_MS, PROCESSOR_GRACE_MS } from "../../../api/routes/health.js";
import { startApiServer } from "../../../api/server.js";
import { indexerProgress } from "../../../db/indexer-status.js";
import { startAnvil } from "../../../local/anvil.js";
import { defineProcessor, startProcessors } from "../../../processors/runner.js";
import { webhookDispatcher } from "../../../processors/webhook-dispatcher.js";
import { waitFor } from "../../helpers/chain.js";
import { newIp } from "../../helpers/clocked-api.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { manualClock } from "../../modules/webhooks/helpers/fixtures.js";

let deps: TestDeps;
let api: Awaited<ReturnType<typeof startApiServer>>;
beforeAll(async () => {
  deps = await createTestDeps();
  api = await startApiServer(deps, 0);
});
afterAll(async () => {
  await api?.close();
  await deps?.cleanup();
});

it("GET /api/health reports the database, each chain's latest block and indexer progress", async () => {
  const health = async () => {
    const res = await fetch(`http://127.0.0.1:${api.port}/api/health`);
    return { res, body: (await res.json()) as any };
  };
  // Right after "ready" Ponder's checkpoints can still sit at the start; wait for live progress.
  const { res, body } = await waitFor(
    async () => {
      const h = await health();
      return h.body.indexer?.chains?.every((c: any) => c.indexedBlock > 0) && h;
    },
    { what: "indexer progress in /api/health", timeout: 60_000 },
  );
  expect(res.status).toBe(200);
  expect(body.status).toBe("ok");
  expect(body.database.ok).toBe(true);
  expect(body.chains.map((c: any) => c.chainId).sort()).toEqual([137, 777177]);
  for (const c of body.chains) {
    expect(c.ok).toBe(true);
    expect(c.latestBlock).toBeGreaterThan(0);
  }
  expect(body.indexer.ready).toBe(true);
  expect(body.issues).toEqual([]);
  // The native coin of 137 (MATIC) is priced by the local PriceOracle; 777177 has no native coin.
  expect(body.prices).toEqual([
    expect.objectContaining({
      chainId: 137,
      symbol: "MATIC",
      ok: true,
      status: "ok",
      source: "trusted_oracle",
      priceUsd: expect.any(String),
    }),
  ]);
  expect(body.prices[0].ageS).toBeGreaterThanOrEqual(0);
  for (const c of body.indexer.chains) {
    expect(c.lagBlocks).toBe(Math.max(0, c.latestBlock - c.indexedBlock));
    expect(c.ok).toBe(true);
    expect(c.lagMs).toBeGreaterThanOrEqual(0);
    expect(c.lagMs).toBeLessThanOrEqual(INDEXER_MAX_LAG_MS);
  }
  // Progress is live: the indexed block moves on with the chain (1 s blocks).
  await waitFor(
    async () => {
      const later = await health();
      return later.body.indexer.chains.every(
        (c: any) => c.indexedBlock > body.indexer.chains.find((x: any) => x.chainId === c.chainId).indexedBlock,
      );
    },
    { what: "indexed blocks to advance", timeout: 60_000 },
  );
});

it("answers 503 with the failing component when a chain is unreachable", async () => {
  const broken = { ...deps, chains: deps.chains.map((c) => ({ ...c })), clients: new Map(deps.clients) };
  const { publicClients } = await import("../../../chains/clients.js");
  const bad = publicClients([{ ...broken.chains[0]!, rpcUrl: "http://127.0.0.1:9", rpcUrls: ["http://127.0.0.1:9"] }]);
  broken.clients.set(broken.chains[0]!.chainId, bad.get(broken.chains[0]!.chainId)!);
  const srv = await startApiServer(broken, 0);
  try {
    const res = await fetch(`http://127.0.0.1:${srv.port}/api/health`);
    const body: any = await res.json();
    expect(res.status).toBe(503);
    expect(body.status).toBe("degraded");
    const down = body.chains.find((c: any) => c.chainId === broken.chains[0]!.chainId);
    expect(down.ok).toBe(false);
    // Its native coin's price (MATIC, read from its oracle on that chain) is unavailable too: creations would answer 503.
    expect(body.issues).toEqual([
      `chain ${down.chainId}: ${down.error}`,
      expect.stringMatching(new RegExp(`^price ${down.chainId} \\w+: unavailable: `)),
    ]);
    expect(body.prices.find((p: any) => p.chainId === down.chainId)).toMatchObject({ ok: false, status: "unavailable" });
  } finally {
    await srv.close();
  }
});

it("a processor with no pass for its interval + 2 minutes makes health degraded (503), named; a pass's error is shown", async () => {
  const clock = manualClock();
  const d = await createTestDeps({ now: clock.now });
  const srv = await startApiServer(d, 0);
  // A client address per request: the clock goes back below, and a rate-limit bucket would refuse that.
  const health = async () => {
    const res = await fetch(`http://127.0.0.1:${srv.port}/api/health`, { headers: { "x-forwarded-for": newIp() } });
    return { status: res.status, body: (await res.json()) as any };
  };
  try {
    // Real passes through the runner: the webhook dispatcher (nothing to send) and one that always throws.
    const failing = defineProcessor({ name: "always-failing", intervalMs: 1000, run: () => Promise.reject(new Error("RPC unreachable")) });
    const runner = startProcessors(d, [webhookDispatcher(), failing], () => {});
    await runner.runOnce();
    await runner.stop(); // then they stop beating, as processes that died
    const { rows } = await d.db.pool.query(`SELECT key, value, updated_at FROM processor_state ORDER BY key`);
    expect(rows.map((r) => [r.key, r.value.error])).toEqual([
      ["heartbeat:always-failing", "RPC unreachable"],
      ["heartbeat:webhook-dispatcher", null],
    ]);
    // The bound is the interval the runner recorded with the heartbeat, plus the grace.
    const bound = (r: any) => (typeof r.value.intervalMs === "number" ? r.value.intervalMs : 0) + PROCESSOR_GRACE_MS;
    const first = Math.min(...rows.map((r) => r.updated_at.getTime() + bound(r)));

    clock.set(first);
    const fine = await health();
    expect(fine.status, JSON.stringify(fine.body.issues)).toBe(200);
    expect(fine.body).toMatchObject({ status: "ok", issues: [] });
    expect(fine.body.processors).toEqual(
      rows.map((r) => ({
        name: r.key.slice("heartbeat:".length),
        lastRunAt: r.updated_at.getTime(),
        ok: true,
        staleAfterMs: bound(r),
        lastError: r.value.error,
      })),
    );

    clock.set(Math.max(...rows.map((r) => r.updated_at.getTime() + bound(r))) + 1);
    const stuck = await health();
    expect(stuck.status).toBe(503);
    expect(stuck.body.status).toBe("degraded");
    expect(stuck.body.processors.map((p: any) => [p.name, p.ok])).toEqual([
      ["always-failing", false],
      ["webhook-dispatcher", false],
    ]);
    expect(stuck.body.issues).toEqual(
      rows.map(
        (r) =>
          `processor ${r.key.slice("heartbeat:".length)}: no pass for ${Math.round((clock.now() - r.updated_at.getTime()) / 1000)} s (bound ${bound(r) / 1000} s)`,
      ),
    );

    // A restarted processor's next pass makes it green again.
    const again = startProcessors(d, [webhookDispatcher(), defineProcessor({ ...failing, run: async () => {} })], () => {});
    await again.runOnce();
    await again.stop();
    clock.set(Date.now());
    const back = await health();
    expect(back.status, JSON.stringify(back.body.issues)).toBe(200);
    expect(back.body.processors.map((p: any) => [p.name, p.ok, p.lastError])).toEqual([
      ["always-failing", true, null],
      ["webhook-dispatcher", true, null],
    ]);

    // A long interval (the sync pruner's 5 minutes) widens the bound: 5 min + 2 min.
    await d.db.pool.query(`DELETE FROM processor_state`);
    await d.db.pool.query(`INSERT INTO processor_state (key, value, updated_at) VALUES ('heartbeat:sync-pruner', $1, $2)`, [
      JSON.stringify({ error: null, intervalMs: 300_000 }),
      new Date(clock.now()),
    ]);
    const t = clock.now();
    clock.set(t + 7 * 60_000);
    expect((await health()).status).toBe(200);
    clock.set(t + 7 * 60_000 + 1);
    const pruner = await health();
    expect(pruner.status).toBe(503);
    expect(pruner.body.issues).toEqual(["processor sync-pruner: no pass for 420 s (bound 420 s)"]);
    expect(pruner.body.processors).toEqual([{ name: "sync-pruner", lastRunAt: t, ok: false, staleAfterMs: 420_000, lastError: null }]);
  } finally {
    await srv.close();
    await d.cleanup();
  }
});

it("an indexer more than 2 minutes behind a chain's head makes health degraded (503), naming the chain", async () => {
  // The chain 777177 as seen by this API: an Anvil of its own, mined 10 s a block past what the indexer has.
  const anvil = await startAnvil({ chainId: 777177, blockTime: 0 });
  try {
    const chainId = 777177;
    const progress = (await indexerProgress(deps.db))!.find((p) => p.chainId === chainId)!;
    const ahead = {
      ...deps,
      chains: deps.chains.map((c) => (c.chainId === chainId ? { ...c, rpcUrl: anvil.rpcUrl, rpcUrls: [anvil.rpcUrl] } : c)),
      clients: new Map(deps.clients),
    };
    const { publicClients } = await import("../../../chains/clients.js");
    const client = publicClients(ahead.chains.filter((c) => c.chainId === chainId)).get(chainId)!;
    ahead.clients.set(chainId, client);
    await client.request({ method: "anvil_mine" as any, params: [`0x${(progress.indexedBlock + 100).toString(16)}`, "0xa"] as any });
    const head = await client.getBlock({ blockTag: "latest" });
    const srv = await startApiServer(ahead, 0);
    try {
      const res = await fetch(`http://127.0.0.1:${srv.port}/api/health`);
      const body: any = await res.json();
      expect(res.status).toBe(503);
      expect(body.status).toBe("degraded");
      expect(body.chains.find((c: any) => c.chainId === chainId)).toMatchObject({ ok: true, latestBlock: Number(head.number) });
      const entry = body.indexer.chains.find((c: any) => c.chainId === chainId);
      expect(entry.ok).toBe(false);
      expect(entry.latestBlock).toBe(Number(head.number));
      expect(entry.lagMs).toBe(Number(head.timestamp) * 1000 - (await indexedAt(entry.indexedBlock)));
      expect(entry.lagMs).toBeGreaterThan(INDEXER_MAX_LAG_MS);
      expect(body.issues).toEqual([
        `indexer ${chainId}: block ${entry.indexedBlock} is ${Math.round(entry.lagMs / 1000)} s behind the chain head (bound 120 s)`,
      ]);
      expect(body.indexer.chains.find((c: any) => c.chainId !== chainId).ok).toBe(true);
    } finally {
      await srv.close();
    }
  } finally {
    await anvil.stop();
  }
});

/** The timestamp (ms) of a block of the shared chain 777177 as Ponder's checkpoint holds it. */
async function indexedAt(block: number) {
  const b = await deps.clients.get(777177)!.getBlock({ blockNumber: BigInt(block) });
  return Number(b.timestamp) * 1000;
}
