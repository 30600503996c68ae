import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createPublicClient, type PublicClient } from "viem";
import { faultOf, providerLabel, retryAfterMs, rpcPool, type RpcPool } from "./rpc-pool.js";

// The pool against small JSON-RPC servers of this test (no chain): each answers as it is told, like a provider
// that rate-limits, fails, hangs, lags or serves another chain.

type Reply = {
  status?: number;
  headers?: Record<string, string>;
  result?: unknown;
  error?: { code: number; message: string };
  hang?: boolean;
};
type Fake = {
  url: string;
  seen: { method: string; at: number }[];
  reply: (method: string, params: unknown[]) => Reply;
  close(): Promise<void>;
};

const servers: Fake[] = [];
const pools: RpcPool[] = [];
afterEach(async () => {
  pools.splice(0);
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A provider for chain 137 at head 100 unless told otherwise. */
async function fake(reply?: (method: string, params: unknown[]) => Reply | undefined): Promise<Fake> {
  const seen: Fake["seen"] = [];
  const hanging = new Set<http.ServerResponse>();
  const f: Fake = {
    url: "",
    seen,
    reply: (method, params) =>
      reply?.(method, params) ??
      (method === "eth_chainId" ? { result: "0x89" } : method === "eth_blockNumber" ? { result: "0x64" } : { result: "0x1" }),
    close: () =>
      new Promise((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const { id, method, params } = JSON.parse(body);
      seen.push({ method, at: Date.now() });
      const r = f.reply(method, params);
      if (r.hang) return void hanging.add(res);
      res.writeHead(r.status ?? 200, { "content-type": "application/json", ...r.headers });
      res.end(JSON.stringify(r.error ? { jsonrpc: "2.0", id, error: r.error } : { jsonrpc: "2.0", id, result: r.result }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  f.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/SECRET-KEY`;
  servers.push(f);
  return f;
}

function poolOf(fakes: Fake[], extra: Partial<Parameters<typeof rpcPool>[0]> = {}) {
  const pool = rpcPool({ chainId: 137, urls: fakes.map((f) => f.url), timeoutMs: 300, ...extra });
  pools.push(pool);
  return { pool, client: createPublicClient({ transport: pool.transport }) as PublicClient };
}
const balanceCalls = (f: Fake) => f.seen.filter((s) => s.method === "eth_getBalance").length;
const ADDR = "0x000000000000000000000000000000000000dEaD";

describe("rpcPool", () => {
  it("moves a read to the next provider when the first answers 5xx, and leaves the first alone while it backs off", async () => {
    const bad = await fake((m) => (m === "eth_getBalance" ? { status: 503, result: null } : undefined));
    const good = await fake();
    const { pool, client } = poolOf([bad, good]);
    expect(await client.getBalance({ address: ADDR })).toBe(1n);
    expect(await client.getBalance({ address: ADDR })).toBe(1n);
    expect(balanceCalls(bad)).toBe(1);
    expect(balanceCalls(good)).toBe(2);
    const [b] = pool.providers();
    expect(b).toMatchObject({ state: "failing", errors: 1 });
    expect(b!.lastError).toMatch(/^server: /);
  });

  it("honours a 429's Retry-After: the provider is rate_limited until then and not asked", async () => {
    const limited = await fake(() => ({ status: 429, headers: { "retry-after": "60" } }));
    const good = await fake();
    const { pool, client } = poolOf([limited, good]);
    const before = Date.now();
    await client.getBalance({ address: ADDR });
    await client.getBalance({ address: ADDR });
    // Its first answer (to the pool's first head probe) was the 429: nothing was asked of it after.
    expect(limited.seen.length).toBeGreaterThanOrEqual(1);
    expect(balanceCalls(limited)).toBe(0);
    expect(balanceCalls(good)).toBe(2);
    const [l] = pool.providers();
    expect(l!.state).toBe("rate_limited");
    expect(l!.until! - before).toBeGreaterThanOrEqual(59_000);
  });

  it("takes JSON-RPC -32005 (limit exceeded) for a rate limit too", async () => {
    const limited = await fake((m) => (m === "eth_getBalance" ? { error: { code: -32005, message: "request rate exceeded" } } : undefined));
    const good = await fake();
    const { pool, client } = poolOf([limited, good]);
    expect(await client.getBalance({ address: ADDR })).toBe(1n);
    expect(pool.providers()[0]!.state).toBe("rate_limited");
  });

  it("gives up on a provider that hangs after its timeout and asks the next", async () => {
    const hangs = await fake((m) => (m === "eth_getBalance" ? { hang: true } : undefined));
    const good = await fake();
    const { pool, client } = poolOf([hangs, good]);
    expect(await client.getBalance({ address: ADDR })).toBe(1n);
    expect(pool.providers()[0]!.lastError).toMatch(/^timeout: /);
  });

  it("does not read from a provider more than maxLagBlocks behind while one in sync answers", async () => {
    const lagging = await fake((m) => (m === "eth_blockNumber" ? { result: "0x5a" } : undefined)); // 90
    const synced = await fake(); // 100
    const { pool, client } = poolOf([lagging, synced], { maxLagBlocks: 3 });
    await pool.probe();
    expect(pool.providers().map((p) => [p.state, p.lagBlocks])).toEqual([
      ["lagging", 10],
      ["ok", 0],
    ]);
    await client.getBalance({ address: ADDR });
    expect(balanceCalls(lagging)).toBe(0);
    expect(balanceCalls(synced)).toBe(1);
  });

  it("does not take a lagging provider's null receipt for an answer: with no provider in sync answering, the read fails", async () => {
    const hash = `0x${"cd".repeat(32)}`;
    let syncedDown = true;
    const synced = await fake((m) => (m === "eth_getTransactionReceipt" && syncedDown ? { status: 503 } : undefined)); // head 100
    const lagging = await fake((m) =>
      m === "eth_blockNumber" ? { result: "0x5a" } : m === "eth_getTransactionReceipt" ? { result: null } : undefined,
    );
    const { pool } = poolOf([synced, lagging], { maxLagBlocks: 3 });
    await pool.probe();
    expect(pool.providers().map((p) => p.state)).toEqual(["ok", "lagging"]);
    const ask = () => pool.transport({ retryCount: 0 }).request({ method: "eth_getTransactionReceipt", params: [hash] });
    await expect(ask()).rejects.toThrow(/lags; no provider in sync answered/);
    syncedDown = false;
    await pool.probe();
    expect(await ask()).toBe("0x1");
  });

  it("returns the node's own answer (a revert) without asking another provider", async () => {
    const reverts = await fake((m) => (m === "eth_call" ? { error: { code: 3, message: "execution reverted" } } : undefined));
    const other = await fake();
    const { client } = poolOf([reverts, other]);
    await expect(client.call({ to: ADDR, data: "0x12345678" })).rejects.toThrow(/execution reverted/);
    expect(other.seen.filter((s) => s.method === "eth_call")).toHaveLength(0);
  });

  it("sends a signed transaction to every usable provider; one accepting is enough", async () => {
    const hash = `0x${"ab".repeat(32)}`;
    const a = await fake((m) => (m === "eth_sendRawTransaction" ? { result: hash } : undefined));
    const b = await fake((m) => (m === "eth_sendRawTransaction" ? { error: { code: -32000, message: "already known" } } : undefined));
    const c = await fake((m) => (m === "eth_sendRawTransaction" ? { status: 502 } : undefined));
    const { client } = poolOf([c, b, a]);
    expect(await client.request({ method: "eth_sendRawTransaction", params: ["0x02"] })).toBe(hash);
    for (const f of [a, b, c]) expect(f.seen.filter((s) => s.method === "eth_sendRawTransaction")).toHaveLength(1);
  });

  it("a broadcast every provider refuses fails with the node's reason, not a provider's fault", async () => {
    const a = await fake((m) => (m === "eth_sendRawTransaction" ? { status: 500 } : undefined));
    const b = await fake((m) =>
      m === "eth_sendRawTransaction" ? { error: { code: -32000, message: "max fee per gas less than block base fee" } } : undefined,
    );
    const { client } = poolOf([a, b]);
    await expect(client.request({ method: "eth_sendRawTransaction", params: ["0x02"] })).rejects.toThrow(/less than block base fee/);
  });

  it("refuses a provider that answers for another chain, naming it without its key", async () => {
    const wrong = await fake((m) => (m === "eth_chainId" ? { result: "0x1" } : undefined));
    const good = await fake();
    const { pool, client } = poolOf([wrong, good]);
    const err = await pool.verifyChainIds().catch((e: Error) => e);
    expect(String(err)).toContain(`RPC provider ${providerLabel(wrong.url, 0)} of chain 137 answers for chain 1: fix RPC_URL_137`);
    expect(String(err)).not.toContain("SECRET-KEY");
    await client.getBalance({ address: ADDR });
    expect(balanceCalls(wrong)).toBe(0);
    expect(pool.providers()[0]!.state).toBe("wrong_chain");
  });

  it("keeps a provider under its request budget (requests per second)", async () => {
    const f = await fake();
    const { client } = poolOf([f], { maxRps: [4] });
    await Promise.all(Array.from({ length: 8 }, () => client.getBalance({ address: ADDR })));
    const first = f.seen[0]!.at;
    // Its head and chain id probes count against the budget too.
    expect(f.seen.filter((s) => s.at < first + 900).length).toBeLessThanOrEqual(4);
    expect(balanceCalls(f)).toBe(8);
  });

  it("retries a lone provider's fault, as a single http transport did", async () => {
    let n = 0;
    const flaky = await fake((m) => (m === "eth_getBalance" && n++ < 2 ? { status: 502 } : undefined));
    const { client } = poolOf([flaky]);
    expect(await client.getBalance({ address: ADDR })).toBe(1n);
    expect(balanceCalls(flaky)).toBe(3);
  });
});

describe("providerLabel", () => {
  it("keeps the host and port, never the path, query or user info", () => {
    expect(providerLabel("https://user:pw@polygon-mainnet.g.alchemy.com/v2/KEY?x=1", 0)).toBe("1:polygon-mainnet.g.alchemy.com");
    expect(providerLabel("http://127.0.0.1:8545", 2)).toBe("3:127.0.0.1:8545");
  });
});

describe("retryAfterMs", () => {
  it("reads seconds and HTTP dates", () => {
    expect(retryAfterMs("60")).toBe(60_000);
    expect(retryAfterMs(new Date(Date.UTC(2030, 0, 1, 0, 1)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(60_000);
    expect(retryAfterMs(null)).toBeNull();
    expect(retryAfterMs("soon")).toBeNull();
  });
});

describe("faultOf", () => {
  it("is null for an answer of the node", async () => {
    const { RpcRequestError } = await import("viem");
    expect(faultOf(new RpcRequestError({ body: {}, error: { code: -32000, message: "nonce too low" }, url: "x" }))).toBeNull();
  });
});
