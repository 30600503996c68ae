import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import pg from "pg";
import { getAddress, multicall3Abi, zeroAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ensureProgressTrigger, indexerProgress, progressChannel } from "../../../db/indexer-status.js";
import { detectPayments, nativeBalances } from "../../../modules/payments/index.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Woken detection: the detector's fallback poll is set to a minute, so a payment detected within a
// few indexed blocks (1 s each) was detected because Ponder's commit woke it, not by polling.
// With 200 other open payments in the database; native coin through Multicall3.
const OTHER_OPEN = 200;
/** Ponder may index a few blocks in a row when it catches up; polling would take ~60. */
const MAX_BLOCKS = 5n;

let svc: TestService;
let merchant: { id: string; apiKey: string };
beforeAll(async () => {
  svc = await startTestService({ env: { DETECTOR_INTERVAL_MS: "60000" } });
  merchant = await svc.newMerchant();
});
afterAll(() => svc?.stop());
vi.setConfig({ testTimeout: 300_000 });

const chainOf = (id: number) => svc.deps.chains.find((c) => c.chainId === id)!;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const q = async (sql: string, args: unknown[] = []) => (await svc.deps.db.pool.query(sql, args)).rows;

async function create(body: Record<string, unknown>): Promise<{ id: string; recipient: Address; due: bigint }> {
  const res = await svc.http("POST", "/payments", {
    body: { merchant: payout(), orderId: `order-${Math.random()}`, blockConfirmations: 1, ...body },
    apiKey: merchant.apiKey,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id = (res.body.url as string).split("/pay/")[1]!;
  const [row] = await q(`SELECT recipient_address, due_units FROM payments WHERE id = $1`, [id]);
  return { id, recipient: row.recipient_address, due: BigInt(row.due_units) };
}

async function indexedBlock(chainId: number): Promise<bigint> {
  const p = (await indexerProgress(svc.deps.db))?.find((x) => x.chainId === chainId);
  return BigInt(p?.indexedBlock ?? 0);
}

/** Waits for `paid` (or later); returns how many blocks past `block` Ponder had indexed by then. */
async function blocksUntilPaid(id: string, chainId: number, block: bigint): Promise<bigint> {
  return waitFor(
    async () => {
      const [p] = await q(`SELECT paid_at FROM payments WHERE id = $1`, [id]);
      // Read after seeing `paid`: at least the block indexed when it was set.
      return p.paid_at ? (await indexedBlock(chainId)) - block + 1n : null;
    },
    { timeout: 120_000, interval: 25, what: `payment ${id} paid` },
  );
}

describe("woken detection", () => {
  it("installs the progress trigger on the table behind Ponder's checkpoint view, once", async () => {
    const client = await svc.deps.db.pool.connect();
    try {
      const table = await ensureProgressTrigger(client, svc.deps.db.viewsSchema);
      expect(table).toMatch(/^"ponder_[0-9a-f]+"\._ponder_checkpoint$/);
      expect(await ensureProgressTrigger(client, svc.deps.db.viewsSchema)).toBe(table);
      const rows = await q(`SELECT tgname FROM pg_trigger WHERE tgrelid = $1::regclass AND tgname = $2`, [
        table,
        `${svc.deps.db.viewsSchema}_progress_notify`,
      ]);
      expect(rows).toHaveLength(1);
    } finally {
      client.release();
    }
  });

  it("Ponder's commit of a block is announced with the chain id, the block's rows already visible", async () => {
    const chain = chainOf(777177);
    const h = chainHelpers(chain);
    const p = await create({ chainId: "777177", token: h.token("USDC").address, amount: "1" });
    const listener = new pg.Client({ connectionString: svc.deps.config.DATABASE_URL });
    await listener.connect();
    try {
      let block: bigint | null = null;
      let hash = "";
      // On each announcement for 777177 once the payment's block is indexed: is its row there?
      const checks: Promise<boolean>[] = [];
      listener.on("notification", (n) => {
        if (n.payload !== "777177" || block === null) return;
        const b = block;
        checks.push(
          (async () => {
            if ((await indexedBlock(777177)) < b) return false;
            const rows = await q(`SELECT 1 FROM ${svc.deps.db.viewsSchema}.transfer WHERE transaction_hash = $1`, [hash]);
            if (!rows.length) throw new Error(`block ${b} announced as indexed, its transfer not visible`);
            return true;
          })(),
        );
      });
      await listener.query(`LISTEN "${progressChannel(svc.deps.db.viewsSchema)}"`);
      const receipt = await h.pay("USDC", p.recipient, p.due);
      hash = receipt.transactionHash;
      block = receipt.blockNumber;
      await waitFor(async () => (await Promise.all(checks)).some(Boolean), {
        timeout: 120_000,
        interval: 25,
        what: "a progress notification for chain 777177 covering the payment's block",
      });
    } finally {
      await listener.end();
    }
  });

  it(`detects a payment within a few indexed blocks with ${OTHER_OPEN} other open payments`, async () => {
    const chain = chainOf(777177);
    const h = chainHelpers(chain);
    const p = await create({ chainId: "777177", token: h.token("USDC").address, amount: "1.5" });
    // Other open payments: copies of this one at fresh addresses nobody pays.
    const addresses = Array.from({ length: OTHER_OPEN }, () => getAddress(payout()));
    await q(
      `INSERT INTO payments
       SELECT r.* FROM payments p, unnest($2::text[]) WITH ORDINALITY AS a(address, n),
         LATERAL jsonb_populate_record(NULL::payments, to_jsonb(p) || jsonb_build_object(
           'id', gen_random_uuid(), 'recipient_address', a.address, 'order_id', 'other-' || a.n)) AS r
       WHERE p.id = $1`,
      [p.id, addresses],
    );
    const [{ n }] = await q(`SELECT count(*)::int AS n FROM payments WHERE status IN ('pending', 'expired')`);
    expect(n).toBeGreaterThan(OTHER_OPEN);

    const receipt = await h.pay("USDC", p.recipient, p.due);
    const blocks = await blocksUntilPaid(p.id, 777177, receipt.blockNumber);
    console.log(`[measure] paid within ${blocks} indexed block(s) of the payment's block, ${n} open payments`);
    expect(blocks).toBeLessThanOrEqual(MAX_BLOCKS);
    const [row] = await q(`SELECT received_units, payment_tx_hash FROM payments WHERE id = $1`, [p.id]);
    expect(BigInt(row.received_units)).toBe(p.due);
    expect(row.payment_tx_hash).toBe(receipt.transactionHash);
  });

  it("a partial payment is recorded, then completed; a pass over the last blocks looks at a handful of payments", async () => {
    const chain = chainOf(777177);
    const h = chainHelpers(chain);
    const p = await create({ chainId: "777177", token: h.token("USDT").address, amount: "2" });
    const half = p.due / 2n;
    const first = await h.pay("USDT", p.recipient, half);
    await waitFor(
      async () => {
        const [r] = await q(`SELECT status, received_units FROM payments WHERE id = $1`, [p.id]);
        return r.status === "pending" && BigInt(r.received_units) === half;
      },
      { timeout: 120_000, interval: 25, what: "the partial amount recorded" },
    );
    // The cost of a pass follows the window's transfers: of the 200+ open payments only those paid
    // in it are summed (this file's; other test files' payments live in other schemas).
    const latest = await indexedBlock(777177);
    const pass = await detectPayments(svc.deps, chain, latest, { changedAfter: first.blockNumber - 1n });
    expect(pass.candidates).toBeGreaterThanOrEqual(1);
    expect(pass.candidates).toBeLessThanOrEqual(5);

    const second = await h.pay("USDT", p.recipient, p.due - half);
    expect(await blocksUntilPaid(p.id, 777177, second.blockNumber)).toBeLessThanOrEqual(MAX_BLOCKS);
    const [r] = await q(`SELECT received_units, overpayment_units, payment_tx_hash FROM payments WHERE id = $1`, [p.id]);
    expect(BigInt(r.received_units)).toBe(p.due);
    expect(r.overpayment_units).toBe("0");
    expect(r.payment_tx_hash).toBe(first.transactionHash); // the first transfer of the payment
  });
});

describe("native coin through Multicall3", () => {
  it("Multicall3 is deployed on the local chain and reads many balances in one call", async () => {
    const chain = chainOf(137);
    const h = chainHelpers(chain);
    expect((await h.pub.getCode({ address: chain.multicall3 }))?.length).toBeGreaterThan(2);
    const funded = getAddress(payout());
    const receipt = await h.sendNative(funded, 12345n);
    const addresses = [funded, ...Array.from({ length: 30 }, () => getAddress(payout()))];
    // One aggregate3 call, failures not allowed: the batch itself works at that block.
    const direct = await svc.deps.clients.get(137)!.multicall({
      contracts: addresses.map((a) => ({
        address: chain.multicall3,
        abi: multicall3Abi,
        functionName: "getEthBalance" as const,
        args: [a] as const,
      })),
      multicallAddress: chain.multicall3,
      blockNumber: receipt.blockNumber,
      allowFailure: false,
    });
    expect(direct).toEqual([12345n, ...addresses.slice(1).map(() => 0n)]);
    expect(await nativeBalances(svc.deps, chain, addresses, receipt.blockNumber)).toEqual(direct);
    expect(await nativeBalances(svc.deps, chain, [funded], receipt.blockNumber - 1n)).toEqual([0n]);
  });

  it("a native-coin payment is detected within a few indexed blocks", async () => {
    const chain = chainOf(137);
    const h = chainHelpers(chain);
    const p = await create({ chainId: "137", token: zeroAddress, amount: "1" });
    const receipt = await h.sendNative(p.recipient, p.due);
    const blocks = await blocksUntilPaid(p.id, 137, receipt.blockNumber);
    console.log(`[measure] native payment paid within ${blocks} indexed block(s)`);
    expect(blocks).toBeLessThanOrEqual(MAX_BLOCKS);
    const [r] = await q(`SELECT received_units FROM payments WHERE id = $1`, [p.id]);
    expect(BigInt(r.received_units)).toBe(p.due);
  });
});
