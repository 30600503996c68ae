import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createPublicClient, http, keccak256, parseEther, parseGwei, type Hex, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { viemChain } from "../../chains/clients.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { GasCapError, GasEstimateError, txSender, type StoredTx, type TxOutcome } from "../../chains/tx-sender.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { chainHelpers, waitFor } from "../helpers/chain.js";
import { startTestService, type TestService } from "../helpers/service.js";

// chains/tx-sender.ts: only the node's "no receipt" plus a nonce used at a final depth makes a transaction
// dropped; an RPC failure decides nothing. Only a revert is a GasEstimateError; a transport failure propagates.
vi.setConfig({ testTimeout: 180_000 });

// ---- A scripted JSON-RPC node: each method answers a result, an RPC error, or an HTTP status.
type Answer = { result: unknown } | { error: { code: number; message: string } } | { http: number };
let script: Record<string, (params: any[]) => Answer> = {};
const calls: { method: string; params: any[] }[] = [];
let server: Server;
let fakeUrl = "";
let svc: TestService;

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const { id, method, params } = JSON.parse(raw);
      calls.push({ method, params });
      const answer = script[method]?.(params) ?? { error: { code: -32601, message: `no script for ${method}` } };
      if ("http" in answer) {
        res.writeHead(answer.http).end("upstream unavailable");
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, ...answer }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  fakeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  svc = await startTestService({ processors: false });
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await svc?.stop();
});

const fakeChain = (rpcUrl: string) =>
  ({
    chainId: 777177,
    name: "fake",
    finalityBlocks: 30,
    rpcUrl,
    multicall3: "0xcA11bde05977b3631167028862bE2a173976CA11",
    tokens: [],
  }) as unknown as ActiveChain;
const account = privateKeyToAccount(generatePrivateKey());
const hex = (n: number | bigint) => `0x${n.toString(16)}`;
/** No retries: one scripted answer per call. */
function fakeSender(rpcUrl = fakeUrl) {
  const chain = fakeChain(rpcUrl);
  const client = createPublicClient({ chain: viemChain(chain), transport: http(rpcUrl, { retryCount: 0 }) }) as PublicClient;
  // Reconcile records each stored transaction as its nonce's first version (tx_versions) in this file's schema.
  return txSender({ db: svc.deps.db, chain, client, account });
}
const storedTx = (nonce: number): StoredTx => {
  const rawTx = `0x02${nonce.toString(16).padStart(4, "0")}` as Hex;
  return { hash: keccak256(rawTx), rawTx, nonce };
};
async function reconcileOne(tx: StoredTx) {
  const outcomes: TxOutcome[] = [];
  await fakeSender().reconcile([tx], async (_, o) => void outcomes.push(o));
  return outcomes;
}
const sentRaw = () => calls.filter((c) => c.method === "eth_sendRawTransaction").length;

describe("gas estimation", () => {
  // What viem asks before estimating for a local account (eth_fillTransaction falls back when unknown), and the head
  // the estimate is pinned to (chains/money-block.ts).
  const prepared: Record<string, (p: any[]) => Answer> = {
    eth_blockNumber: () => ({ result: hex(100) }),
    eth_chainId: () => ({ result: hex(777177) }),
    eth_getTransactionCount: () => ({ result: "0x0" }),
    eth_maxPriorityFeePerGas: () => ({ result: "0x1" }),
    eth_getBlockByNumber: () => ({ result: { number: hex(100), baseFeePerGas: "0x10", timestamp: "0x1", transactions: [] } }),
  };
  const send = (rpcUrl?: string) =>
    fakeSender(rpcUrl).sendTransaction({ to: account.address, data: "0x", record: async () => expect.fail("nothing is signed") });

  it("a revert is a GasEstimateError", async () => {
    script = { ...prepared, eth_estimateGas: () => ({ error: { code: 3, message: "execution reverted: nothing to sweep" } }) };
    const e = await send().catch((x) => x);
    expect(e).toBeInstanceOf(GasEstimateError);
    expect(e.message).toContain("nothing to sweep");
  });

  it("is made at a block number (the head, never below the indexer's block), with the fees, not at latest", async () => {
    script = { ...prepared, eth_estimateGas: () => ({ error: { code: 3, message: "execution reverted: nothing to sweep" } }) };
    const indexed = async () => BigInt((await indexerProgress(svc.deps.db))?.find((p) => p.chainId === 777177)?.indexedBlock ?? 0);
    const max = (a: bigint, b: bigint) => (a > b ? a : b);
    const before = await indexed();
    const from = calls.length;
    await send().catch(() => undefined);
    const after = await indexed();
    const [request, block] = calls.slice(from).find((c) => c.method === "eth_estimateGas")!.params;
    // A lagging provider answers "latest" with an older state; a block it has not seen it cannot answer.
    expect(block).toMatch(/^0x[0-9a-f]+$/);
    expect(BigInt(block)).toBeGreaterThanOrEqual(max(100n, before));
    expect(BigInt(block)).toBeLessThanOrEqual(max(100n, after));
    expect(request.maxFeePerGas).toBeDefined();
  });

  it("an HTTP 503, an RPC internal error and a refused connection are rethrown as they are", async () => {
    script = { ...prepared, eth_estimateGas: () => ({ http: 503 }) };
    const e503 = await send().catch((x) => x);
    expect(e503).toBeInstanceOf(Error);
    expect(e503).not.toBeInstanceOf(GasEstimateError);
    expect(e503.message).toContain("503");

    script = { ...prepared, eth_estimateGas: () => ({ error: { code: -32603, message: "header not found" } }) };
    const internal = await send().catch((x) => x);
    expect(internal).not.toBeInstanceOf(GasEstimateError);
    expect(internal.message).toContain("header not found");

    // A port nothing listens on.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = await send(`http://127.0.0.1:${port}`).catch((x) => x);
    expect(refused).toBeInstanceOf(Error);
    expect(refused).not.toBeInstanceOf(GasEstimateError);
  });
});

describe("gas cap", () => {
  const prepared: Record<string, (p: any[]) => Answer> = {
    eth_blockNumber: () => ({ result: hex(100) }),
    eth_chainId: () => ({ result: hex(777177) }),
    eth_getTransactionCount: () => ({ result: "0x0" }),
    eth_maxPriorityFeePerGas: () => ({ result: "0x1" }),
    eth_getBlockByNumber: () => ({ result: { number: hex(100), baseFeePerGas: "0x10", timestamp: "0x1", transactions: [] } }),
  };
  const send = (gasCap: bigint, gas?: bigint) =>
    fakeSender().sendTransaction({ to: account.address, data: "0x", gas, gasCap, record: async () => expect.fail("nothing is signed") });

  it("an estimate above the operation's cap (a token that burns gas) signs nothing: GasCapError, a GasEstimateError", async () => {
    script = { ...prepared, eth_estimateGas: () => ({ result: hex(20_100_000) }) };
    const e = await send(300_000n).catch((x) => x);
    expect(e).toBeInstanceOf(GasCapError);
    expect(e).toBeInstanceOf(GasEstimateError);
    expect(e.estimate).toBe(20_100_000n);
    expect(e.cap).toBe(300_000n);
    expect(e.message).toContain("exceeds this operation's cap of 300000");
  });

  it("an explicit gas limit above the cap is refused too", async () => {
    script = { ...prepared };
    await expect(send(100_000n, 100_001n)).rejects.toBeInstanceOf(GasCapError);
  });
});

describe("reconcile against a scripted node", () => {
  // Head 100, the node's finalized block 36: the safe block is max(36, 100 − 30) = 70.
  const node = (over: Record<string, (p: any[]) => Answer>) => {
    calls.length = 0;
    script = {
      eth_getTransactionCount: ([, tag]) => ({ result: hex(tag === "latest" ? 5 : tag === hex(70) ? 2 : 99) }),
      eth_blockNumber: () => ({ result: hex(100) }),
      eth_getBlockByNumber: ([tag]) => (tag === "finalized" ? { result: { number: hex(36) } } : { result: null }),
      eth_sendRawTransaction: () => ({ error: { code: -32000, message: "nonce too low" } }),
      ...over,
    };
  };

  it("an RPC error on the receipt leaves the transaction for the next pass (even with its nonce final)", async () => {
    node({ eth_getTransactionReceipt: () => ({ http: 502 }) });
    expect(await reconcileOne(storedTx(1))).toEqual([]);
    node({ eth_getTransactionReceipt: () => ({ error: { code: -32603, message: "internal error" } }) });
    expect(await reconcileOne(storedTx(1))).toEqual([]);
    expect(sentRaw()).toBe(0);
  });

  it("no receipt and the nonce used at a final depth: dropped; the safe block is the shallower of finalized and head − finality", async () => {
    node({ eth_getTransactionReceipt: () => ({ result: null }) });
    expect(await reconcileOne(storedTx(1))).toEqual([{ status: "dropped" }]);
    expect(calls.filter((c) => c.method === "eth_getTransactionCount").map((c) => c.params[1])).toEqual(["latest", hex(70)]);
    expect(sentRaw()).toBe(0);
  });

  it("no receipt, the nonce used only above the safe block: not dropped, the same bytes are sent again", async () => {
    node({ eth_getTransactionReceipt: () => ({ result: null }) });
    const tx = storedTx(3); // latest count 5, safe count 2
    expect(await reconcileOne(tx)).toEqual([{ status: "sent" }]);
    expect(calls.find((c) => c.method === "eth_sendRawTransaction")?.params).toEqual([tx.rawTx]);
  });

  it("no receipt and the final nonce unknown (the node cannot serve that state): not dropped", async () => {
    node({
      eth_getTransactionReceipt: () => ({ result: null }),
      eth_getTransactionCount: ([, tag]) =>
        tag === "latest" ? { result: hex(5) } : { error: { code: -32000, message: "missing trie node" } },
    });
    expect(await reconcileOne(storedTx(1))).toEqual([{ status: "sent" }]);
  });
});

describe("reconcile on Anvil (1 s blocks, chain 777177: 30 finality blocks, finalized = head − 64)", () => {
  it("a transaction whose nonce another one took is dropped only once that one is 30 blocks deep", async () => {
    const chain = svc.deps.chains.find((c) => c.chainId === 777177)!;
    const h = chainHelpers(chain);
    const signer = await h.newPayer();
    const sender = txSender({ db: svc.deps.db, chain, client: h.pub as PublicClient, account: signer });
    // Signed and stored, never broadcast (a crash); then nonce 0 goes to another transaction.
    const fees = { maxFeePerGas: parseGwei("50"), maxPriorityFeePerGas: parseGwei("1") };
    const rawTx = await h.walletOf(signer).signTransaction({ to: signer.address, value: 1n, nonce: 0, gas: 21_000n, ...fees });
    const stored = { hash: keccak256(rawTx), rawTx, nonce: 0 };
    const other = await h.wait(await h.walletOf(signer).sendTransaction({ to: signer.address, value: 2n, nonce: 0, ...fees }));

    const outcomes: TxOutcome["status"][] = [];
    await sender.reconcile([stored], async (_, o) => void outcomes.push(o.status));
    expect(outcomes).toEqual(["sent"]); // used, but not final: it may still come back
    // 31 blocks at once rather than 31 s of the chain's blocks.
    await h.mine(31);
    await waitFor(async () => (await h.pub.getBlockNumber({ cacheTime: 0 })) >= other.blockNumber + 31n, {
      what: "30 blocks on top",
      timeout: 90_000,
    });
    await sender.reconcile([stored], async (_, o) => void outcomes.push(o.status));
    expect(outcomes).toEqual(["sent", "dropped"]);
  });

  it("on Anvil, an estimate under the cap whose margin crosses it is signed with the cap as its limit", async () => {
    const chain = svc.deps.chains.find((c) => c.chainId === 777177)!;
    const h = chainHelpers(chain);
    const sender = txSender({ db: svc.deps.db, chain, client: h.pub as PublicClient, account: await h.newPayer() });
    let signed: Hex | undefined;
    const tx = await sender.sendTransaction({
      to: account.address,
      value: 1n,
      gasCap: 22_000n,
      record: async (_, t) => void (signed = t.hash),
    });
    expect(tx?.hash).toBe(signed);
    const mined = await h.pub.getTransaction({ hash: tx!.hash });
    expect(mined.gas).toBe(22_000n); // 21,000 estimated; the 20% margin would be 25,200
  });

  it("a revert on Anvil is a GasEstimateError", async () => {
    const chain = svc.deps.chains.find((c) => c.chainId === 777177)!;
    const h = chainHelpers(chain);
    const sender = txSender({ db: svc.deps.db, chain, client: h.pub as PublicClient, account: await h.newPayer() });
    // The factory only lets the settler call deployAndSweep; garbage calldata reverts in any case.
    const e = await sender
      .sendTransaction({
        to: chain.factory!,
        data: "0xdeadbeef",
        value: parseEther("0"),
        record: async () => expect.fail("nothing is signed"),
      })
      .catch((x) => x);
    expect(e).toBeInstanceOf(GasEstimateError);
  });
});
