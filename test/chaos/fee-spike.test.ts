import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createWalletClient, getAddress, http as viemHttp, parseGwei, parseUnits, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { priceOracleAbi } from "../../abis/PriceOracle.js";
import { testTokenAbi } from "../../abis/TestToken.js";
import { startApiServer } from "../../api/server.js";
import { createDeps } from "../../app/deps.js";
import { viemChain } from "../../chains/clients.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { LOCAL_ROLES } from "../../local/accounts.js";
import type { AppDeps } from "../../core/deps.js";
import { migrate } from "../../db/migrate.js";
import { startStack, type Stack } from "../../local/stack.js";
import { createApiKey, createMerchant } from "../../modules/merchants/index.js";
import { resolveNativePriceUsd } from "../../modules/pricing/index.js";
import { allProcessors } from "../../processors/index.js";
import { startProcessors, type ProcessorRunner } from "../../processors/runner.js";
import { chainHelpers, waitFor } from "../helpers/chain.js";
import { readResponse } from "../helpers/clocked-api.js";

// Settlement through a fee spike, end to end: the whole service (API, detector, settler, indexer) on a stack of its own,
// chain 137 mined by this test, block by block, at a base fee it chooses, and chain 777177 mined by Anvil every second.
// The moment a sweep is signed, every next block's base fee is 3× that sweep's max fee: it can never be included. The
// settler must replace it (same nonce, higher fees) and settle during the spike; with a cap below the spike it must
// wait at the cap, say so, and settle once the base fee falls; meanwhile chain 777177 settles in its normal time.

const SPIKED = 137;
const OTHER = 777177;
/** The cap on chain 137 for this run: above the first spike's replacement, below the second spike. */
const CAP_GWEI = 400;
const NORMAL = parseGwei("10");
const BLOCK_MS = 300;

let stack: Stack;
let deps: AppDeps;
let api: Awaited<ReturnType<typeof startApiServer>>;
let processors: ProcessorRunner;
let chain: ActiveChain;
let other: ActiveChain;
let dataDir: string;
let miner: ReturnType<typeof startMiner>;

beforeAll(async () => {
  dataDir = path.resolve(".data/chaos", `fee-spike-${process.pid}`);
  stack = await startStack({ dataDir, fresh: true, chainIds: [SPIKED, OTHER], blockTime: 1 });
  await stack.ponder!.waitReady(180_000);
  deps = createDeps({
    env: {
      ...stack.env,
      WEBHOOK_ALLOW_PRIVATE: "true",
      [`MAX_FEE_PER_GAS_GWEI_${SPIKED}`]: String(CAP_GWEI),
      // Health names a chain whose paid payments wait longer than this.
      SETTLEMENT_STALL_MS: "4000",
      // Every quote and completion reads the oracle now (the last test changes MATIC's price between two payments).
      PRICE_CACHE_TTL_MS: "0",
    },
  });
  await migrate(deps.db);
  api = await startApiServer(deps, 0);
  chain = deps.chains.find((c) => c.chainId === SPIKED)!;
  other = deps.chains.find((c) => c.chainId === OTHER)!;
  miner = startMiner(chain);
  await miner.ready;
  processors = startProcessors(deps, allProcessors(), () => {});
});

afterAll(async () => {
  await processors?.stop();
  await miner?.stop();
  await api?.close();
  await deps?.db.close();
  await stack?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Mines chain 137 every BLOCK_MS at the base fee `baseFee()` gives for the next block (anvil_setNextBlockBaseFeePerGas),
 * and can be held (`hold`) so several transactions land in one block.
 */
function startMiner(c: ActiveChain) {
  const h = chainHelpers(c);
  const rpc = (method: string, params: unknown[] = []) => h.pub.request({ method: method as any, params: params as any });
  let baseFee: () => Promise<bigint> = async () => NORMAL;
  let held = false;
  let stopped = false;
  const blocks: { number: bigint; baseFee: bigint }[] = [];
  const ready = (async () => {
    await rpc("evm_setIntervalMining", [0]);
    await rpc("evm_setAutomine", [false]);
  })();
  const loop = (async () => {
    await ready;
    while (!stopped) {
      if (!held) {
        const fee = await baseFee();
        await rpc("anvil_setNextBlockBaseFeePerGas", [toHex(fee)]);
        await rpc("evm_mine");
        blocks.push({ number: await h.pub.getBlockNumber({ cacheTime: 0 }), baseFee: fee });
      }
      await new Promise((r) => setTimeout(r, BLOCK_MS));
    }
  })();
  return {
    ready,
    blocks,
    setBaseFee: (f: () => Promise<bigint>) => void (baseFee = f),
    hold: (on: boolean) => void (held = on),
    stop: async () => {
      stopped = true;
      await loop.catch(() => {});
      await rpc("evm_setAutomine", [true]).catch(() => {});
    },
  };
}

async function http(method: string, p: string, apiKey?: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${api.port}/api${p}`, {
    method,
    headers: { ...(apiKey ? { "x-api-key": apiKey } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return readResponse(res);
}

/** A merchant with a funded Gas Tank (100 USDT, credited by the operator) and a payout address of its own. */
async function newMerchant() {
  const m = await createMerchant(deps.db, { name: `Spike ${Math.random()}` });
  const apiKey = (await createApiKey(deps.db, m.id)).key;
  await deps.db.pool.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', 100000000, $2)`,
    [m.id, `fund:${m.id}`],
  );
  return { id: m.id, apiKey, payout: privateKeyToAccount(generatePrivateKey()).address };
}

async function createPayment(m: { apiKey: string; payout: Address }, c: ActiveChain, amount: string) {
  const token = chainHelpers(c).token("USDC").address;
  const res = await http("POST", "/payments", m.apiKey, {
    orderId: `spike-${Math.random()}`,
    chainId: String(c.chainId),
    token,
    amount,
    merchant: m.payout,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.url as string).split("/pay/")[1]!;
}

async function paymentRow(id: string) {
  return (await deps.db.pool.query(`SELECT * FROM payments WHERE id = $1`, [id])).rows[0];
}
const statusOf = async (id: string) => (await paymentRow(id)).status as string;

/** Mints to three fresh payers, then has them pay in one block of chain 137 (the miner held meanwhile). */
async function payTogether(c: ActiveChain, payments: { id: string; units: bigint }[]) {
  const h = chainHelpers(c);
  const payers = [];
  for (const p of payments) {
    const payer = await h.newPayer();
    await h.mint("USDC", payer.address, p.units, payer);
    payers.push(payer);
  }
  miner.hold(true);
  try {
    const hashes: Hex[] = [];
    for (const [i, p] of payments.entries()) {
      const to = getAddress((await paymentRow(p.id)).recipient_address);
      hashes.push(
        await h
          .walletOf(payers[i]!)
          .writeContract({ address: h.token("USDC").address, abi: testTokenAbi, functionName: "transfer", args: [to, p.units] }),
      );
    }
    return hashes;
  } finally {
    miner.hold(false);
  }
}

/**
 * The versions signed for the settlement of `paymentId`: same signer and nonce, oldest first. Once one mines, every
 * version's `outcome` is its hash.
 */
async function versionsOf(paymentId: string) {
  const { rows } = await deps.db.pool.query(
    `SELECT v.hash, v.nonce, v.max_fee_per_gas::text AS max_fee, v.outcome FROM tx_versions v
       JOIN settlements s ON s.chain_id = v.chain_id AND s.signer = v.signer AND s.nonce = v.nonce
      WHERE $1 = ANY(s.payment_ids) ORDER BY v.created_at`,
    [paymentId],
  );
  return rows as { hash: Hex; nonce: number; max_fee: string; outcome: string | null }[];
}
/** The highest max fee of a version not yet mined on chain 137 (0 when none waits). */
async function pendingMaxFee(): Promise<bigint> {
  const { rows } = await deps.db.pool.query(
    `SELECT COALESCE(max(max_fee_per_gas), 0)::text AS f FROM tx_versions WHERE chain_id = $1 AND outcome IS NULL`,
    [SPIKED],
  );
  return BigInt(rows[0].f);
}
const health = async () => (await http("GET", "/health")).body as { status: string; issues: string[] };

/** What the Gas Tank must have paid for `id`: its quote, its gas charged at the mined sweep's receipt (read from the chain). */
async function expectedCharge(id: string, receipt: { gasUsed: bigint; effectiveGasPrice: bigint }, batch: number, nativeUsd18?: bigint) {
  const p = await paymentRow(id);
  const native = nativeUsd18 ?? (await resolveNativePriceUsd(deps, SPIKED, undefined, { cached: true }))!.priceUsd18;
  const ceil = (a: bigint, b: bigint) => (a + b - 1n) / b;
  const share = ceil(receipt.gasUsed, BigInt(batch));
  return (
    BigInt(p.gas_tank_fee_micros) - ceil(BigInt(p.gas_fee_usd18), 10n ** 12n) + ceil(share * receipt.effectiveGasPrice * native, 10n ** 30n)
  );
}
async function charged(id: string): Promise<bigint> {
  const { rows } = await deps.db.pool.query(
    `SELECT COALESCE(-sum(amount_micros), 0)::text AS c FROM ledger_entries WHERE payment_id = $1`,
    [id],
  );
  return BigInt(rows[0].c);
}

it(
  "a 3× spike over a pending sweep: replaced with the same nonce and higher fees, all three complete during the spike, each paid once, the Gas Tank charged the mined version",
  { timeout: 180_000 },
  async () => {
    const h = chainHelpers(chain);
    const merchants = [await newMerchant(), await newMerchant(), await newMerchant()];
    const units = parseUnits("12.5", 6);
    const ids = [];
    for (const m of merchants) ids.push(await createPayment(m, chain, "12.5"));
    // From the first version signed on, every block is priced at 3× its max fee, for 40 blocks.
    let spike: bigint | undefined;
    let spikeBlocks = 0;
    miner.setBaseFee(async () => {
      if (spike === undefined) {
        const f = await pendingMaxFee();
        if (f > 0n) spike = 3n * f;
      }
      if (spike !== undefined && spikeBlocks < 40) {
        spikeBlocks++;
        return spike;
      }
      return NORMAL;
    });
    await payTogether(
      chain,
      ids.map((id) => ({ id, units })),
    );
    for (const id of ids)
      await waitFor(async () => (await statusOf(id)) === "completed", { timeout: 60_000, what: `payment ${id} completed` });
    const spikeBlocksAtEnd = spikeBlocks;
    console.log(`[measure] spike to all three completed: ${spikeBlocksAtEnd} blocks at ${spike! / 10n ** 9n} gwei`);
    miner.setBaseFee(async () => NORMAL);
    expect(spike, "a sweep was signed and the spike began").toBeDefined();
    expect(spikeBlocksAtEnd, "all three completed while the spike lasted").toBeLessThan(40);

    // The first sweep signed (priced under the spike) never mined: a replacement with its nonce and higher fees did. A
    // sweep signed later in the spike (the detector and the settler run side by side) was priced for it from the start.
    const first = (await Promise.all(ids.map(versionsOf))).sort((a, b) => a[0]!.nonce - b[0]!.nonce)[0]!;
    expect(first.length).toBeGreaterThanOrEqual(2);
    expect(BigInt(first[0]!.max_fee)).toBeLessThan(spike!);
    expect(BigInt(first.find((v) => v.outcome === v.hash)!.max_fee)).toBeGreaterThan(BigInt(first[0]!.max_fee));
    for (const [i, id] of ids.entries()) {
      const versions = await versionsOf(id);
      expect(new Set(versions.map((v) => v.nonce)).size).toBe(1);
      const mined = versions.filter((v) => v.outcome === v.hash);
      expect(mined).toHaveLength(1);
      const p = await paymentRow(id);
      expect(p.settlement_tx_hash).toBe(mined[0]!.hash);
      const receipt = await h.pub.getTransactionReceipt({ hash: mined[0]!.hash });
      const block = await h.pub.getBlock({ blockNumber: receipt.blockNumber });
      expect(block.baseFeePerGas).toBe(spike); // mined during the spike
      // Each merchant paid exactly once, the whole amount (Gas Tank mode).
      expect(await h.balanceOf("USDC", merchants[i]!.payout)).toBe(units);
      const { rows } = await deps.db.pool.query(`SELECT cardinality(payment_ids) AS n FROM settlements WHERE tx_hash = $1`, [
        mined[0]!.hash,
      ]);
      expect(await charged(id)).toBe(await expectedCharge(id, receipt, rows[0].n));
    }
  },
);

it(
  "a spike above the cap: the sweep waits at the cap and health says so, while chain 777177 settles in its normal time; it completes once the base fee falls",
  { timeout: 180_000 },
  async () => {
    const m = await newMerchant();
    const units = parseUnits("7", 6);
    const id = await createPayment(m, chain, "7");
    let spiking = true;
    let spike: bigint | undefined;
    miner.setBaseFee(async () => {
      if (!spiking) return NORMAL;
      if (spike === undefined) {
        const f = await pendingMaxFee();
        if (f > 0n) spike = 3n * parseGwei(String(CAP_GWEI));
      }
      return spike ?? NORMAL;
    });
    await payTogether(chain, [{ id, units }]);
    await waitFor(
      async () => (await health()).issues.some((i) => i.startsWith(`settlement ${SPIKED}: a transaction waits at the fee cap`)),
      {
        timeout: 60_000,
        what: "health names the chain at the fee cap",
      },
    );
    expect((await health()).status).not.toBe("ok");
    expect(await statusOf(id)).toBe("deploying_wallet");
    const atCap = await versionsOf(id);
    expect(atCap.at(-1)!.max_fee).toBe(parseGwei(String(CAP_GWEI)).toString());
    expect(atCap.every((v) => v.outcome === null)).toBe(true);

    // Meanwhile chain 777177 settles as usual: paid -> completed in a few of its 1 s blocks.
    const o = await newMerchant();
    const otherId = await createPayment(o, other, "3");
    const oh = chainHelpers(other);
    await oh.pay("USDC", getAddress((await paymentRow(otherId)).recipient_address), parseUnits("3", 6));
    await waitFor(async () => (await statusOf(otherId)) === "paid" || (await statusOf(otherId)) === "completed", {
      timeout: 30_000,
      what: "paid on 777177",
    });
    const paidAt = Date.now();
    await waitFor(async () => (await statusOf(otherId)) === "completed", { timeout: 20_000, what: "completed on 777177" });
    console.log(`[measure] chain ${OTHER} paid -> completed during the spike on ${SPIKED}: ${Date.now() - paidAt} ms`);
    expect(await oh.balanceOf("USDC", o.payout)).toBe(parseUnits("3", 6));
    expect(await statusOf(id)).toBe("deploying_wallet"); // still at the cap
    expect((await health()).issues.some((i) => i.startsWith(`settlement ${SPIKED}:`))).toBe(true);
    expect((await health()).issues.some((i) => i.startsWith(`settlement ${OTHER}:`))).toBe(false);

    // The base fee falls: the version at the cap mines, the payment completes once, health clears.
    spiking = false;
    await waitFor(async () => (await statusOf(id)) === "completed", { timeout: 60_000, what: "completed after the spike" });
    const versions = await versionsOf(id);
    expect(versions.filter((v) => v.outcome === v.hash)).toHaveLength(1);
    expect(new Set(versions.map((v) => v.nonce)).size).toBe(1);
    expect(await chainHelpers(chain).balanceOf("USDC", m.payout)).toBe(units);
    await waitFor(async () => !(await health()).issues.some((i) => i.startsWith(`settlement ${SPIKED}:`)), {
      timeout: 30_000,
      what: "health clear of chain 137",
    });
  },
);

it("the Gas Tank pays each sweep's gas at the native coin's price when it completes: MATIC's price doubled between two payments", async () => {
  miner.setBaseFee(async () => NORMAL);
  const h = chainHelpers(chain);
  const owner = createWalletClient({ chain: viemChain(chain), transport: viemHttp(chain.rpcUrl), account: LOCAL_ROLES.deployer });
  const setMatic = async (usd18: bigint) =>
    h.pub.waitForTransactionReceipt({
      hash: await owner.writeContract({ address: chain.oracle!, abi: priceOracleAbi, functionName: "setPrice", args: ["MATIC", usd18] }),
    });
  const settleOne = async (m: Awaited<ReturnType<typeof newMerchant>>) => {
    const id = await createPayment(m, chain, "5");
    await payTogether(chain, [{ id, units: parseUnits("5", 6) }]);
    await waitFor(async () => (await statusOf(id)) === "completed", { timeout: 60_000, what: `payment ${id} completed` });
    const tx = (await paymentRow(id)).settlement_tx_hash as Hex;
    const { rows } = await deps.db.pool.query(`SELECT cardinality(payment_ids) AS n FROM settlements WHERE tx_hash = $1`, [tx]);
    return { id, receipt: await h.pub.getTransactionReceipt({ hash: tx }), batch: rows[0].n as number };
  };
  const first = (await resolveNativePriceUsd(deps, SPIKED))!.priceUsd18;
  const a = await settleOne(await newMerchant());
  await setMatic(2n * first);
  const b = await settleOne(await newMerchant());
  expect(await charged(a.id)).toBe(await expectedCharge(a.id, a.receipt, a.batch, first));
  expect(await charged(b.id)).toBe(await expectedCharge(b.id, b.receipt, b.batch, 2n * first));
  await setMatic(first);
});
