import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPublicClient, type PublicClient } from "viem";
import type { Db } from "../db/client.js";
import { indexerProgress, type IndexerProgress } from "../db/indexer-status.js";
import { moneyBlock } from "./money-block.js";
import { rpcPool } from "./rpc-pool.js";

// moneyBlock, and why reads that decide money are pinned to it: behind the RPC pool, a lagging provider answers
// "latest" with an older state, but cannot answer a block it has not seen.

vi.mock("../db/indexer-status.js", () => ({ indexerProgress: vi.fn() }));
const progress = vi.mocked(indexerProgress);
const indexed = (chainId: number, block: number): IndexerProgress[] => [
  { chainId, chainName: "polygon", indexedBlock: block, finalizedBlock: block - 10, indexedAt: 0 },
];
const db = {} as Db;
const headAt = (n: bigint) => ({ getBlockNumber: async () => n }) as unknown as PublicClient;

beforeEach(() => progress.mockReset());

describe("moneyBlock", () => {
  it("is the node's head when the indexer is not ahead of it, or has not reported the chain", async () => {
    progress.mockResolvedValue(indexed(137, 95));
    expect(await moneyBlock(db, headAt(100n), 137)).toBe(100n);
    progress.mockResolvedValue(indexed(1, 500));
    expect(await moneyBlock(db, headAt(100n), 137)).toBe(100n);
    progress.mockResolvedValue(null);
    expect(await moneyBlock(db, headAt(100n), 137)).toBe(100n);
  });

  it("is the indexer's block when the node's head (a lagging provider's) is below it", async () => {
    progress.mockResolvedValue(indexed(137, 100));
    expect(await moneyBlock(db, headAt(90n), 137)).toBe(100n);
  });
});

// Two providers of chain 137: one in sync (head 100, the deposit of 5 wei arrived in block 95), one lagging (head 90).
type Provider = { url: string; failNextBalance: boolean; close(): Promise<void> };
const servers: Provider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function provider(head: number): Promise<Provider> {
  const answer = (method: string, params: unknown[], p: Provider) => {
    if (method === "eth_chainId") return { result: "0x89" };
    if (method === "eth_blockNumber") return { result: `0x${head.toString(16)}` };
    if (method === "eth_getBalance") {
      if (p.failNextBalance) {
        p.failNextBalance = false;
        return { status: 503 };
      }
      const tag = params[1] as string;
      const at = tag === "latest" ? head : Number(BigInt(tag));
      if (at > head) return { error: { code: -32000, message: "header not found" } };
      return { result: at >= 95 ? "0x5" : "0x0" };
    }
    return { error: { code: -32601, message: "method not found" } };
  };
  const p: Provider = { url: "", failNextBalance: false, close: async () => {} };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const { id, method, params } = JSON.parse(body);
      const r: { status?: number; result?: unknown; error?: unknown } = answer(method, params, p);
      res.writeHead(r.status ?? 200, { "content-type": "application/json" });
      res.end(JSON.stringify(r.error ? { jsonrpc: "2.0", id, error: r.error } : { jsonrpc: "2.0", id, result: r.result ?? null }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  p.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  p.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  servers.push(p);
  return p;
}

describe("a balance read behind the RPC pool while the in-sync provider hiccups", () => {
  it('"latest" is answered by the lagging provider (the deposit seems gone); pinned to moneyBlock it fails instead', async () => {
    const inSync = await provider(100);
    const lagging = await provider(90);
    let t = 0;
    const pool = rpcPool({ chainId: 137, urls: [inSync.url, lagging.url], timeoutMs: 1_000, probeIntervalMs: 1e9, now: () => t });
    const client = createPublicClient({ cacheTime: 0, transport: pool.transport }) as PublicClient;
    await pool.probe();
    const address = "0x000000000000000000000000000000000000dEaD";

    // The in-sync provider answers 503 once: the read goes to the lagging one, whose "latest" predates the deposit.
    inSync.failNextBalance = true;
    expect(await client.getBalance({ address })).toBe(0n);

    t += 60_000; // its backoff over
    progress.mockResolvedValue(indexed(137, 100));
    const at = await moneyBlock(db, client, 137);
    expect(at).toBe(100n);
    inSync.failNextBalance = true;
    // Pinned: the lagging provider has no block 100 ("header not found"), so no stale answer: the pass tries again.
    await expect(client.getBalance({ address, blockNumber: at })).rejects.toThrow(/header not found/);
    t += 60_000;
    expect(await client.getBalance({ address, blockNumber: at })).toBe(5n);
  });
});
