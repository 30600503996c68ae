import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createPublicClient, http, parseEther, parseGwei, parseTransaction, type Address, type Hex, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { chainInfo } from "../../chains/registry.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { txSender, type SignedTx, type TxOutcome } from "../../chains/tx-sender.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { settlementBacklog } from "../../modules/settlement/index.js";
import { startTestService, type TestService } from "../helpers/service.js";

// chains/tx-sender.ts on a fee market: a private Anvil with chain id 8453 (no other test shares its base fee), mined
// by hand, its base fee set block by block (anvil_setNextBlockBaseFeePerGas). A transaction priced under the base
// fee is replaced with the same nonce and higher fees, up to the chain's cap; a dropped one is sent again. A chain
// without EIP-1559 (legacy gasPrice) has a private Anvil of its own, at the berlin hardfork (last describe).
vi.setConfig({ testTimeout: 120_000 });

let svc: TestService;
let anvil: Anvil;
let client: PublicClient;
const CHAIN_ID = 8453;
const rpcAt = async (url: string, method: string, params: unknown[] = []) => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
};
const rpc = (method: string, params: unknown[] = []) => rpcAt(anvil.rpcUrl, method, params);
const hex = (x: bigint) => `0x${x.toString(16)}`;
/** Mines one block whose base fee is `gwei`. */
const mine = async (gwei: string) => {
  await rpc("anvil_setNextBlockBaseFeePerGas", [`0x${parseGwei(gwei).toString(16)}`]);
  await rpc("evm_mine");
};
const chainWith = (cap: number): ActiveChain =>
  ({
    ...chainInfo(CHAIN_ID)!,
    rpcUrl: anvil.rpcUrl,
    rpcUrls: [anvil.rpcUrl],
    rpcMaxRps: [],
    multicall3: "0xcA11bde05977b3631167028862bE2a173976CA11",
    startBlock: 0,
    tokens: [],
    fees: { type: "eip1559", minPriorityFeeGwei: 1, maxFeePerGasGwei: cap, blockTimeMs: 2_000, replaceAfterBlocks: 3 },
  }) as ActiveChain;

beforeAll(async () => {
  svc = await startTestService({ processors: false });
  anvil = await startAnvil({ chainId: CHAIN_ID, blockTime: 0 });
  client = createPublicClient({ transport: http(anvil.rpcUrl) }) as PublicClient;
  await rpc("evm_setAutomine", [false]);
  await mine("10");
});
afterAll(async () => {
  await anvil?.stop();
  await svc?.stop();
});

/** A signer of its own with 10 ETH (Anvil's first account funds it), and a sender for it on the private chain. */
async function newSigner(cap = 500) {
  const account = privateKeyToAccount(generatePrivateKey());
  await rpc("anvil_setBalance", [account.address, `0x${parseEther("10").toString(16)}`]);
  return { account, sender: txSender({ db: svc.deps.db, chain: chainWith(cap), client, account }) };
}
async function send(sender: ReturnType<typeof txSender>, to: Address, value: bigint): Promise<SignedTx> {
  return (await sender.sendTransaction({ to, value, gas: 21_000n, record: async () => {} }))!;
}
/** Reconciles until every transaction has an outcome other than `sent`, mining a block at `gwei` before each pass. */
async function reconcileUntilMined(sender: ReturnType<typeof txSender>, txs: SignedTx[], gwei: () => string, maxPasses = 20) {
  const outcomes = new Map<Hex, TxOutcome>();
  for (let i = 0; i < maxPasses && outcomes.size < txs.length; i++) {
    await mine(gwei());
    await sender.reconcile(
      txs.filter((t) => !outcomes.has(t.hash)),
      async (t, o) => void (o.status !== "sent" && outcomes.set(t.hash, o)),
    );
  }
  return outcomes;
}
const versions = async (signer: string, chainId = CHAIN_ID) =>
  (
    await svc.deps.db.pool.query<{
      nonce: number;
      version: number;
      hash: string;
      max_fee_per_gas: string;
      max_priority_fee_per_gas: string;
      signed_block: string;
      outcome: string | null;
      at_fee_cap: boolean;
    }>(
      `SELECT nonce, version, hash, max_fee_per_gas, max_priority_fee_per_gas, signed_block, outcome, at_fee_cap FROM tx_versions
        WHERE chain_id = $1 AND signer = $2 ORDER BY nonce, version`,
      [chainId, signer.toLowerCase()],
    )
  ).rows;

beforeEach(async () => {
  // Every test starts from a calm market, nothing pending from the one before.
  await mine("10");
});

describe("a base-fee spike above pending transactions' max fee", () => {
  it("replaces them with the same nonces and higher fees; each mines exactly once, at the price of the version that mined", async () => {
    const { account, sender } = await newSigner();
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const txs = [await send(sender, to, 1n), await send(sender, to, 2n), await send(sender, to, 3n)];
    expect(txs.map((t) => t.nonce)).toEqual([0, 1, 2]);
    const signedAt = await versions(account.address);
    expect(signedAt.map((v) => BigInt(v.max_fee_per_gas))).toEqual([parseGwei("21"), parseGwei("21"), parseGwei("21")]); // 2 × 10 + 1

    // Every block from now at 3×: the first versions can never be included.
    const outcomes = await reconcileUntilMined(sender, txs, () => "30");
    expect([...outcomes.values()].map((o) => o.status)).toEqual(["mined", "mined", "mined"]);

    const rows = await versions(account.address);
    for (const nonce of [0, 1, 2]) {
      const mine = rows.filter((r) => r.nonce === nonce);
      expect(mine.length).toBeGreaterThanOrEqual(2); // the first and at least one replacement
      expect(BigInt(mine.at(-1)!.max_fee_per_gas)).toBeGreaterThanOrEqual((parseGwei("21") * 11n) / 10n);
      const o = outcomes.get(txs[nonce]!.hash)!;
      if (o.status !== "mined") throw new Error("not mined");
      // The outcome names the version that mined: a replacement, not the stored first hash.
      expect(o.receipt.transactionHash).not.toBe(txs[nonce]!.hash);
      expect(o.receipt.type).toBe("eip1559");
      expect(mine.every((r) => r.outcome === o.receipt.transactionHash.toLowerCase())).toBe(true);
      // Paid at that block's base fee plus the tip, what the Gas Tank is charged from (gasUsed × effectiveGasPrice).
      const block = await client.getBlock({ blockHash: o.receipt.blockHash });
      expect(o.receipt.effectiveGasPrice).toBe(block.baseFeePerGas! + parseGwei("1.1"));
    }
    // Each value moved once: no nonce was used twice, none skipped.
    expect(await client.getBalance({ address: to })).toBe(6n);
    expect(await client.getTransactionCount({ address: account.address })).toBe(3);
    expect((await settlementBacklog(svc.deps.db.pool)).get(CHAIN_ID)?.pendingTransactions ?? 0).toBe(0);
  });

  it("at the chain's fee cap the transaction waits, health's backlog says so, and it mines once the base fee falls", async () => {
    const { account, sender } = await newSigner(40);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const tx = await send(sender, to, 7n);
    // 60 gwei: even the cap (40) cannot pay it. One replacement up to the cap, then it waits there.
    const outcomes = await reconcileUntilMined(sender, [tx], () => "60", 6);
    expect(outcomes.size).toBe(0);
    const waiting = await versions(account.address);
    expect(BigInt(waiting.at(-1)!.max_fee_per_gas)).toBe(parseGwei("40"));
    expect(waiting.at(-1)!.at_fee_cap).toBe(true);
    const backlog = (await settlementBacklog(svc.deps.db.pool)).get(CHAIN_ID)!;
    expect(backlog).toMatchObject({ atFeeCap: true });
    expect(backlog.pendingTransactions).toBeGreaterThanOrEqual(1);

    // The base fee falls to 20: the version at the cap mines, no further version signed.
    const mined = await reconcileUntilMined(sender, [tx], () => "20", 4);
    const o = mined.get(tx.hash)!;
    expect(o.status).toBe("mined");
    if (o.status === "mined") expect(o.receipt.transactionHash.toLowerCase()).toBe(waiting.at(-1)!.hash);
    expect((await versions(account.address)).length).toBe(waiting.length);
    expect(await client.getBalance({ address: to })).toBe(7n);
  });
});

describe("a transaction the node dropped", () => {
  it("is sent again and mines with its nonce: no gap", async () => {
    const { account, sender } = await newSigner();
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const tx = await send(sender, to, 5n);
    await rpc("anvil_dropTransaction", [tx.hash]);
    const pool = (await rpc("txpool_content")) as { pending: Record<string, unknown> };
    expect(Object.keys(pool.pending).map((a) => a.toLowerCase())).not.toContain(account.address.toLowerCase());
    const outcomes = await reconcileUntilMined(sender, [tx], () => "10", 3);
    expect(outcomes.get(tx.hash)?.status).toBe("mined");
    expect(await client.getBalance({ address: to })).toBe(5n);
    expect(await client.getTransactionCount({ address: account.address })).toBe(1);
  });
});

// A chain without EIP-1559: a private Anvil at the berlin hardfork, chain id 56 (BSC, long priced by gasPrice alone). Its
// blocks have no base fee and its pool refuses type-2 transactions. What Anvil does, and so how a transaction is kept
// waiting here: anvil_setMinGasPrice moves only what eth_gasPrice answers (its pool takes, and evm_mine includes, a
// lower price), and evm_mine takes every pending transaction that fits. So its blocks hold one transfer (gas limit
// 21,000, filled by price) and a rival bids above ours before each block: what a busy chain's blocks do to a low price.
// Its pool takes a replacement at any higher price (geth wants +10%, which the sender always adds), never an equal one.
describe("a chain without EIP-1559 (legacy gasPrice)", () => {
  const LEGACY_ID = 56;
  let legacy: Anvil;
  let lclient: PublicClient;
  let rival: string; // Anvil's first account: it bids against ours
  const lrpc = (method: string, params: unknown[] = []) => rpcAt(legacy.rpcUrl, method, params);
  const legacyChain = (cap: number): ActiveChain =>
    ({
      ...chainInfo(LEGACY_ID)!,
      rpcUrl: legacy.rpcUrl,
      rpcUrls: [legacy.rpcUrl],
      rpcMaxRps: [],
      multicall3: "0xcA11bde05977b3631167028862bE2a173976CA11",
      startBlock: 0,
      tokens: [],
      fees: { type: "legacy", minPriorityFeeGwei: 0, maxFeePerGasGwei: cap, blockTimeMs: 3_000, replaceAfterBlocks: 3 },
    }) as ActiveChain;
  /** What the node answers for eth_gasPrice. */
  const nodeGasPrice = (gwei: string) => lrpc("anvil_setMinGasPrice", [hex(parseGwei(gwei))]);

  beforeAll(async () => {
    legacy = await startAnvil({ chainId: LEGACY_ID, blockTime: 0, hardfork: "berlin" });
    lclient = createPublicClient({ transport: http(legacy.rpcUrl) }) as PublicClient;
    rival = ((await lrpc("eth_accounts")) as string[])[0]!;
    await lrpc("evm_setAutomine", [false]);
    await lrpc("evm_setBlockGasLimit", [hex(21_000n)]);
  });
  afterAll(async () => {
    await legacy?.stop();
  });
  beforeEach(async () => {
    // Nothing pending from the test before (one transfer a block), and the node asks 2 gwei.
    for (let i = 0; i < 10 && ((await lrpc("txpool_status")) as { pending: string }).pending !== "0x0"; i++) await lrpc("evm_mine");
    await nodeGasPrice("2");
  });

  /** A signer of its own with 10 ETH on the legacy chain, and a sender for it. */
  async function newLegacySigner(cap = 500) {
    const account = privateKeyToAccount(generatePrivateKey());
    await lrpc("anvil_setBalance", [account.address, hex(parseEther("10"))]);
    return { account, sender: txSender({ db: svc.deps.db, chain: legacyChain(cap), client: lclient, account }) };
  }
  /**
   * One reconcile pass a block until the transaction has an outcome other than `sent`: before each block the rival bids
   * `rivalGwei()` (null: no rival), so a lower price waits.
   */
  async function reconcileWhileOutbid(
    sender: ReturnType<typeof txSender>,
    tx: SignedTx,
    rivalGwei: () => string | null,
    maxPasses: number,
  ) {
    let outcome: TxOutcome | undefined;
    for (let i = 0; i < maxPasses && !outcome; i++) {
      const bid = rivalGwei();
      if (bid !== null)
        await lrpc("eth_sendTransaction", [{ from: rival, to: rival, value: "0x1", gas: hex(21_000n), gasPrice: hex(parseGwei(bid)) }]);
      await lrpc("evm_mine");
      await sender.reconcile([tx], async (_, o) => void (o.status !== "sent" && (outcome = o)));
    }
    return outcome;
  }

  it("the node refuses a type-2 transaction: there is no EIP-1559 to price", async () => {
    expect((await lclient.getBlock()).baseFeePerGas ?? null).toBeNull();
    const { account } = await newLegacySigner();
    const type2 = await account.signTransaction({
      chainId: LEGACY_ID,
      type: "eip1559",
      to: rival as Address,
      gas: 21_000n,
      nonce: 0,
      maxFeePerGas: parseGwei("3"),
      maxPriorityFeePerGas: parseGwei("1"),
    });
    await expect(lrpc("eth_sendRawTransaction", [type2])).rejects.toThrow(/not supported by the current hardfork/);
  });

  it("an outbid transaction is replaced with +10% gasPrice and the same nonce; it mines once, as a legacy transaction", async () => {
    const { account, sender } = await newLegacySigner();
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const tx = (await sender.sendTransaction({ to, value: 9n, gas: 21_000n, record: async () => {} }))!;
    // Signed at the node's gas price, type 0; the price stored in both fee columns.
    const first = parseTransaction(tx.rawTx);
    expect(first).toMatchObject({ type: "legacy", gasPrice: parseGwei("2"), nonce: 0 });
    const [v0] = await versions(account.address, LEGACY_ID);
    expect([BigInt(v0!.max_fee_per_gas), BigInt(v0!.max_priority_fee_per_gas)]).toEqual([parseGwei("2"), parseGwei("2")]);

    // Every block a rival bids 2.1 gwei: ours (2) waits its 3 blocks, then 2.2 outbids the rival and mines.
    const o = await reconcileWhileOutbid(sender, tx, () => "2.1", 8);
    if (o?.status !== "mined") throw new Error(`not mined: ${o?.status}`);
    const rows = await versions(account.address, LEGACY_ID);
    expect(rows.map((r) => [r.nonce, r.version, BigInt(r.max_fee_per_gas), BigInt(r.max_priority_fee_per_gas)])).toEqual([
      [0, 0, parseGwei("2"), parseGwei("2")],
      [0, 1, parseGwei("2.2"), parseGwei("2.2")],
    ]);
    expect(BigInt(rows[1]!.signed_block) - BigInt(rows[0]!.signed_block)).toBe(3n); // replaced after the chain's 3 blocks
    expect(o.receipt.transactionHash.toLowerCase()).toBe(rows[1]!.hash);
    expect(o.receipt.type).toBe("legacy");
    expect(o.receipt.effectiveGasPrice).toBe(parseGwei("2.2"));
    expect(await lclient.getTransaction({ hash: o.receipt.transactionHash })).toMatchObject({ type: "legacy", nonce: 0 });
    expect(rows.every((r) => r.outcome === o.receipt.transactionHash.toLowerCase())).toBe(true);
    // Mined once: the first version never, the value moved once, one nonce used.
    await expect(lclient.getTransactionReceipt({ hash: tx.hash })).rejects.toThrow();
    expect(await lclient.getBalance({ address: to })).toBe(9n);
    expect(await lclient.getTransactionCount({ address: account.address })).toBe(1);
  });

  it("follows the node's rising gas price up to the cap; at the cap it waits (health says so) and mines when blocks come down", async () => {
    const { account, sender } = await newLegacySigner(4);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const tx = (await sender.sendTransaction({ to, value: 4n, gas: 21_000n, record: async () => {} }))!;
    // The node now asks 5 gwei and blocks go for 4.5: the replacement takes the node's price, capped at 4; then 4 + 10%
    // is over the cap, so it waits there.
    await nodeGasPrice("5");
    expect(await reconcileWhileOutbid(sender, tx, () => "4.5", 8)).toBeUndefined();
    const waiting = await versions(account.address, LEGACY_ID);
    expect(waiting.map((r) => BigInt(r.max_fee_per_gas))).toEqual([parseGwei("2"), parseGwei("4")]);
    expect(waiting.at(-1)!.at_fee_cap).toBe(true);
    expect((await settlementBacklog(svc.deps.db.pool)).get(LEGACY_ID)).toMatchObject({ atFeeCap: true, pendingTransactions: 1 });

    // The rivals stop: the version at the cap mines, no further version signed.
    const o = await reconcileWhileOutbid(sender, tx, () => null, 3);
    if (o?.status !== "mined") throw new Error(`not mined: ${o?.status}`);
    expect(o.receipt.transactionHash.toLowerCase()).toBe(waiting.at(-1)!.hash);
    expect(o.receipt.type).toBe("legacy");
    expect(o.receipt.effectiveGasPrice).toBe(parseGwei("4"));
    expect((await versions(account.address, LEGACY_ID)).length).toBe(2);
    expect(await lclient.getBalance({ address: to })).toBe(4n);
  });
});
