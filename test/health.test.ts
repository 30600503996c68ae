import { afterAll, beforeAll, expect, it } from "vitest";
import { startApiServer } from "../api/server.js";
import { waitFor } from "./helpers/chain.js";
import { createTestDeps, type TestDeps } from "./helpers/deps.js";

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
  for (const c of body.indexer.chains) {
    expect(c.lagBlocks).toBe(Math.max(0, c.latestBlock - c.indexedBlock));
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
  const { publicClients } = await import("../chains/clients.js");
  const bad = publicClients([{ ...broken.chains[0]!, rpcUrl: "http://127.0.0.1:9" }]);
  broken.clients.set(broken.chains[0]!.chainId, bad.get(broken.chains[0]!.chainId)!);
  const srv = await startApiServer(broken, 0);
  try {
    const res = await fetch(`http://127.0.0.1:${srv.port}/api/health`);
    const body: any = await res.json();
    expect(res.status).toBe(503);
    expect(body.status).toBe("degraded");
    expect(body.chains.find((c: any) => c.chainId === broken.chains[0]!.chainId).ok).toBe(false);
  } finally {
    await srv.close();
  }
});
