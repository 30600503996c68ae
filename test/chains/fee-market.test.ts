import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createPublicClient, http, parseEther, parseGwei, type Address, type Hex, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { chainInfo } from "../../chains/registry.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { txSender, type SignedTx, type TxOutcome } from "../../chains/tx-sender.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { settlementBacklog } from "../../modules/settlement/index.js";
import { startTestService, type TestService } from "../helpers/service.js";

// chains/tx-sender.ts on a fee market: a private Anvil with chain id 8453 (no other test shares its base fee), mined
// by hand, its base fee set block by block (anvil_setNextBlockBaseFeePerGas). A transaction priced under the base
// fee is replaced with the same nonce and higher fees, up to the chain's cap; a dropped one is sent again.
vi.setConfig({ testTimeout: 120_000 });

let svc: TestService;
let anvil: Anvil;
let client: PublicClient;
const CHAIN_ID = 8453;
const rpc = async (method: string, params: unknown[] = []) => {
  const res = await fetch(anvil.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
};
/** Mines one block whose base fee is `gwei`. */
const mine = async (gwei: string) => {
  await rpc("anvil_setNextBlockBaseFeePerGas", [`0x${parseGwei(gwei).toString(16)}`]);
  await rpc("evm_mine");
};
const chainWith = (cap: number): ActiveChain =>
  ({
    ...chainInfo(CHAIN_ID)!,
    rpcUrl: anvil.rpcUrl,
    multicall3: "0xcA11bde05977b3631167028862bE2a173976CA11",
    startBlock: 0,
    tokens: [],
    fees: { minPriorityFeeGwei: 1, maxFeePerGasGwei: cap, blockTimeMs: 2_000, replaceAfterBlocks: 3 },
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
const versions = async (signer: string) =>
  (
    await svc.deps.db.pool.query<{
      nonce: number;
      version: number;
      hash: string;
      max_fee_per_gas: string;
      outcome: string | null;
      at_fee_cap: boolean;
    }>(
      `SELECT nonce, version, hash, max_fee_per_gas, outcome, at_fee_cap FROM tx_versions WHERE chain_id = $1 AND signer = $2 ORDER BY nonce, version`,
      [CHAIN_ID, signer.toLowerCase()],
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
