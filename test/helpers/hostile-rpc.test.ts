import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createPublicClient, http, type Address, type Hash, type PublicClient } from "viem";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { startHostileRpc, type HostileRpc } from "./hostile-rpc.js";

// test/helpers/hostile-rpc.ts against a private Anvil (automine, mined by hand): each mode as a viem client sees it.
vi.setConfig({ testTimeout: 60_000 });

let anvil: Anvil;
let rpc: HostileRpc;
let direct: PublicClient;
let from: Address;
const CLIENT = "hostile-rpc-test";
/** A client of the proxy: no retries, no cache, the service's client header. */
const viaProxy = (o: { timeout?: number; retryCount?: number; batch?: boolean } = {}) =>
  createPublicClient({
    cacheTime: 0,
    transport: http(rpc.url, { retryCount: 0, ...o, fetchOptions: { headers: { "x-chainpay-client": CLIENT } } }),
  }) as PublicClient;
const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const call = async <T>(url: string, method: string, params: unknown[] = []): Promise<T> => {
  const body = (await (await post(url, { jsonrpc: "2.0", id: 1, method, params })).json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
};
const hex = (n: bigint | number) => `0x${n.toString(16)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The emitter's code: every call logs (LOG0, no data) and keeps the value sent. */
const EMITTER = "0x00000000000000000000000000000000000e1700" as Address;
const emit = (value: bigint) => call<Hash>(anvil.rpcUrl, "eth_sendTransaction", [{ from, to: EMITTER, value: hex(value) }]);

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 31337, blockTime: 0 });
  rpc = await startHostileRpc({ upstream: anvil.rpcUrl, label: "test" });
  direct = createPublicClient({ cacheTime: 0, transport: http(anvil.rpcUrl) }) as PublicClient;
  from = (await call<Address[]>(anvil.rpcUrl, "eth_accounts"))[0]!;
  await call(anvil.rpcUrl, "anvil_setCode", [EMITTER, "0x60006000a000"]);
  await call(anvil.rpcUrl, "anvil_mine", [hex(3)]);
});
afterAll(async () => {
  await rpc?.close();
  await anvil?.stop();
});

describe("ok and the log", () => {
  it("forwards, and logs each request (each element of a batch) with its block and the x-chainpay-client header", async () => {
    await rpc.setMode({ kind: "ok" });
    const client = viaProxy();
    expect(await client.getBlockNumber()).toBe(await direct.getBlockNumber());
    await client.getBalance({ address: from, blockTag: "latest" });
    const n = rpc.log.length;
    const res = await post(rpc.url, [
      { jsonrpc: "2.0", id: 7, method: "eth_chainId", params: [] },
      { jsonrpc: "2.0", id: 8, method: "eth_getBlockByNumber", params: ["0x1", false] },
    ]);
    const batch = (await res.json()) as { id: number; result: unknown }[];
    expect(batch.map((r) => r.id)).toEqual([7, 8]);
    expect(batch[0]!.result).toBe("0x7a69");
    expect(rpc.log.slice(0, 2)).toMatchObject([
      { method: "eth_blockNumber", client: CLIENT, answered: "forwarded" },
      { method: "eth_getBalance", block: "latest", client: CLIENT, answered: "forwarded" },
    ]);
    expect(rpc.log.slice(n)).toMatchObject([
      { method: "eth_chainId", answered: "forwarded" },
      { method: "eth_getBlockByNumber", block: "0x1", answered: "forwarded" },
    ]);
    expect(rpc.log[n]!.client).toBeUndefined();
  });
});

describe("rate_limit", () => {
  it("answers 429 with Retry-After and a -32005 body; viem gives up at once without retries, or waits Retry-After and retries", async () => {
    await rpc.setMode({ kind: "rate_limit", retryAfterS: 1 });
    const res = await post(rpc.url, { jsonrpc: "2.0", id: 42, method: "eth_blockNumber", params: [] });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 42, error: { code: -32005, message: "rate limit exceeded" } });
    const batch = await post(rpc.url, [
      { jsonrpc: "2.0", id: 1, method: "eth_chainId" },
      { jsonrpc: "2.0", id: 2, method: "eth_blockNumber" },
    ]);
    expect(batch.status).toBe(429);
    expect(((await batch.json()) as { id: number; error: { code: number } }[]).map((e) => [e.id, e.error.code])).toEqual([
      [1, -32005],
      [2, -32005],
    ]);
    await expect(viaProxy().getBlockNumber()).rejects.toMatchObject({ code: -32005 });
    expect(rpc.log.slice(-4).map((l) => [l.method, l.answered])).toEqual([
      ["eth_blockNumber", "429"],
      ["eth_chainId", "429"],
      ["eth_blockNumber", "429"],
      ["eth_blockNumber", "429"],
    ]);

    // One retry: viem waits the Retry-After second, by which time the provider has recovered.
    const t0 = Date.now();
    const retried = viaProxy({ retryCount: 1 }).getBlockNumber();
    await sleep(300);
    await rpc.setMode({ kind: "ok" });
    expect(await retried).toBe(await direct.getBlockNumber());
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
  });
});

describe("error_5xx", () => {
  it("answers 502 (or the status asked) with a gateway's HTML page", async () => {
    await rpc.setMode({ kind: "error_5xx" });
    const res = await post(rpc.url, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber" });
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toBe("text/html");
    expect(await res.text()).toContain("<h1>502 Bad Gateway</h1>");
    await expect(viaProxy().getBlockNumber()).rejects.toMatchObject({ name: "HttpRequestError", status: 502 });
    await rpc.setMode({ kind: "error_5xx", status: 503 });
    await expect(viaProxy().getBlockNumber()).rejects.toMatchObject({
      status: 503,
      details: expect.stringContaining("Service Unavailable"),
    });
    expect(rpc.log.at(-1)).toMatchObject({ method: "eth_blockNumber", answered: "5xx" });
  });
});

describe("hang", () => {
  it("never answers: a client with a short timeout times out; a request still waiting is answered once the mode changes", async () => {
    await rpc.setMode({ kind: "hang" });
    const t0 = Date.now();
    await expect(viaProxy({ timeout: 300 }).getBlockNumber()).rejects.toMatchObject({ name: "TimeoutError" });
    expect(Date.now() - t0).toBeLessThan(5_000);
    let answered = false;
    const waiting = post(rpc.url, { jsonrpc: "2.0", id: 5, method: "eth_chainId" }).then((r) => {
      answered = true;
      return r.json();
    });
    await sleep(500);
    expect(answered).toBe(false);
    await rpc.setMode({ kind: "ok" });
    expect(await waiting).toEqual({ jsonrpc: "2.0", id: 5, result: "0x7a69" });
    // Logged when it hung, and again when it was answered.
    expect(rpc.log.slice(-3).map((l) => [l.method, l.answered])).toEqual([
      ["eth_blockNumber", "hang"],
      ["eth_chainId", "hang"],
      ["eth_chainId", "forwarded"],
    ]);
  });
});

describe("lag", () => {
  it("answers as a node 10 blocks behind: head, state, receipts, logs and blocks above it are unseen", async () => {
    await rpc.setMode({ kind: "ok" });
    // 15 blocks: the emitter gets 1 wei in the first (seen by the lagging node), 2 wei in the 11th (not seen).
    const seen = await emit(1n);
    await call(anvil.rpcUrl, "anvil_mine", [hex(9)]);
    const unseen = await emit(2n);
    await call(anvil.rpcUrl, "anvil_mine", [hex(4)]);
    const head = await direct.getBlockNumber();
    const top = head - 10n;
    const seenBlock = (await direct.getTransactionReceipt({ hash: seen })).blockNumber;
    const unseenReceipt = await direct.getTransactionReceipt({ hash: unseen });
    expect([seenBlock, unseenReceipt.blockNumber]).toEqual([head - 14n, head - 4n]);

    await rpc.setMode({ kind: "lag", blocks: 10 });
    const client = viaProxy();
    expect(await client.getBlockNumber()).toBe(top);
    // State at "latest" is the state at head - 10.
    expect(await direct.getBalance({ address: EMITTER })).toBe(3n);
    expect(await direct.getBalance({ address: EMITTER, blockNumber: top })).toBe(1n);
    expect(await client.getBalance({ address: EMITTER })).toBe(1n);
    expect(await client.getTransactionCount({ address: from })).toBe(await direct.getTransactionCount({ address: from, blockNumber: top }));
    // A block above head - 10: unknown, as geth answers.
    await expect(client.getBalance({ address: EMITTER, blockNumber: top + 1n })).rejects.toThrow(/header not found/);
    await expect(client.getBlock({ blockNumber: head - 2n })).rejects.toMatchObject({ name: "BlockNotFoundError" });
    await expect(client.getBlock({ blockHash: unseenReceipt.blockHash })).rejects.toMatchObject({ name: "BlockNotFoundError" });
    expect((await client.getBlock()).number).toBe(top);
    expect((await client.getBlock({ blockTag: "safe" })).number).toBeLessThanOrEqual(top);
    // Receipts and transactions mined in the last 10 blocks: not seen.
    expect((await client.getTransactionReceipt({ hash: seen })).blockNumber).toBe(seenBlock);
    await expect(client.getTransactionReceipt({ hash: unseen })).rejects.toMatchObject({ name: "TransactionReceiptNotFoundError" });
    await expect(client.getTransaction({ hash: unseen })).rejects.toMatchObject({ name: "TransactionNotFoundError" });
    // Logs: "latest" is head - 10; from above it, none; by the hash of an unseen block, an error.
    const logs = await client.getLogs({ address: EMITTER, fromBlock: 0n, toBlock: "latest" });
    expect(logs.map((l) => l.transactionHash)).toEqual([seen]);
    expect((await direct.getLogs({ address: EMITTER, fromBlock: 0n, toBlock: "latest" })).length).toBe(2);
    expect(await client.getLogs({ address: EMITTER, fromBlock: head - 4n, toBlock: head })).toEqual([]);
    await expect(client.getLogs({ address: EMITTER, blockHash: unseenReceipt.blockHash })).rejects.toThrow(/unknown block/);
    // A viem batch: each element lagged.
    const batched = viaProxy({ batch: true });
    expect(await Promise.all([batched.getBlockNumber(), batched.getBalance({ address: EMITTER })])).toEqual([top, 1n]);
    expect(rpc.log.slice(-2).map((l) => [l.method, l.block, l.answered])).toEqual([
      ["eth_blockNumber", undefined, "lagged"],
      ["eth_getBalance", "latest", "lagged"],
    ]);
    const raw = await post(rpc.url, [
      { jsonrpc: "2.0", id: 1, method: "eth_blockNumber" },
      { jsonrpc: "2.0", id: 2, method: "eth_getBalance", params: [EMITTER, "latest"] },
      { jsonrpc: "2.0", id: 3, method: "eth_getBalance", params: [EMITTER, hex(head)] },
    ]);
    expect(await raw.json()).toEqual([
      { jsonrpc: "2.0", id: 1, result: hex(top) },
      { jsonrpc: "2.0", id: 2, result: "0x1" },
      { jsonrpc: "2.0", id: 3, error: { code: -32000, message: "header not found" } },
    ]);

    // A lagging node still relays a transaction: mined upstream, its receipt unseen until the proxy lags no more.
    const relayed = await call<Hash>(rpc.url, "eth_sendTransaction", [{ from, to: EMITTER, value: "0x4" }]);
    expect(rpc.log.at(-1)).toMatchObject({ method: "eth_sendTransaction", answered: "forwarded" });
    // Automine answers the hash before the receipt is always readable: wait for it upstream.
    expect((await direct.waitForTransactionReceipt({ hash: relayed, pollingInterval: 20 })).status).toBe("success");
    await expect(client.getTransactionReceipt({ hash: relayed })).rejects.toMatchObject({ name: "TransactionReceiptNotFoundError" });
    await rpc.setMode({ kind: "ok" });
    expect((await client.getTransactionReceipt({ hash: relayed })).status).toBe("success");
  });

  it("holds filter logs above head - N back until the lagging head reaches them", async () => {
    await rpc.setMode({ kind: "lag", blocks: 3 });
    const id = await call<string>(rpc.url, "eth_newFilter", [{ address: EMITTER }]);
    const tx = await emit(5n);
    await sleep(150); // past the proxy's head cache
    expect(await call(rpc.url, "eth_getFilterChanges", [id])).toEqual([]);
    await call(anvil.rpcUrl, "anvil_mine", [hex(3)]);
    await sleep(150);
    expect((await call<{ transactionHash: Hash }[]>(rpc.url, "eth_getFilterChanges", [id])).map((l) => l.transactionHash)).toEqual([tx]);
    expect(await call(rpc.url, "eth_getFilterChanges", [id])).toEqual([]);
    await rpc.setMode({ kind: "ok" });
  });
});

describe("wrong_chain", () => {
  it("names another chain in eth_chainId and net_version, and forwards the rest", async () => {
    await rpc.setMode({ kind: "wrong_chain", chainId: 137 });
    const client = viaProxy();
    expect(await client.getChainId()).toBe(137);
    expect(await direct.getChainId()).toBe(31337);
    expect(await call(rpc.url, "net_version")).toBe("137");
    expect(await client.getBlockNumber()).toBe(await direct.getBlockNumber());
    expect(rpc.log.slice(-3).map((l) => [l.method, l.answered])).toEqual([
      ["eth_chainId", "wrong_chain"],
      ["net_version", "wrong_chain"],
      ["eth_blockNumber", "forwarded"],
    ]);
  });
});

describe("down", () => {
  it("refuses connections (a kept-alive one is cut), then listens again on the same port", async () => {
    await rpc.setMode({ kind: "ok" });
    const client = viaProxy();
    await client.getBlockNumber(); // a kept-alive connection to cut
    const url = rpc.url;
    const logged = rpc.log.length;
    await rpc.setMode({ kind: "down" });
    // A new connection is refused. (A request on the cut keep-alive connection may instead fail "other side closed".)
    const connect = new Promise<void>((resolve, reject) =>
      net.connect(Number(new URL(url).port), "127.0.0.1", () => resolve()).on("error", reject),
    );
    await expect(connect).rejects.toMatchObject({ code: "ECONNREFUSED" });
    await expect(client.getBlockNumber()).rejects.toMatchObject({ name: "HttpRequestError" });
    await expect(client.getBlockNumber()).rejects.toMatchObject({ name: "HttpRequestError", cause: { cause: { code: "ECONNREFUSED" } } });
    expect(rpc.log.length).toBe(logged);
    await rpc.setMode({ kind: "ok" });
    expect(rpc.url).toBe(url);
    expect(await client.getBlockNumber()).toBe(await direct.getBlockNumber());
  });
});
