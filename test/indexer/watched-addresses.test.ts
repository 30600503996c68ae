import { randomBytes } from "node:crypto";
import { eq, or } from "drizzle-orm";
import { getAddress, pad, parseUnits, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testTokenAbi, testTokenBytecode } from "../../abis/TestToken.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { registerAddress } from "../../modules/addresses/index.js";
import { watchAddresses } from "../../src/watched-addresses.js";
import { chainHelpers, waitFor } from "../helpers/chain.js";
import { startTestService, type TestService } from "../helpers/service.js";

// The indexer sees Transfers of any ERC-20 and keeps only those touching a registered address
// (app `watched_addresses`, registered with the payment / Gas Tank address, learnt by Ponder via LISTEN).
let svc: TestService;
let merchant: { id: string; apiKey: string };
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  merchant = await svc.newMerchant();
});
afterAll(() => svc?.stop());
vi.setConfig({ testTimeout: 300_000 });

// Generous: on a loaded 2-core machine Ponder can take tens of seconds to index a block.
const WAIT = { timeout: 120_000 };
const CHAIN = 137;
const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;

/** Indexed rows of the given transactions (Ponder's transfer view). */
async function rowsOf(...hashes: Hex[]) {
  const t = svc.deps.db.views.transfer;
  return svc.deps.db.orm
    .select()
    .from(t)
    .where(or(...hashes.map((h) => eq(t.transactionHash, h))));
}

/** Waits until Ponder has indexed `block` of the chain (every log of it has been through the handlers). */
async function indexedThrough(block: bigint) {
  await waitFor(
    async () => {
      const p = (await indexerProgress(svc.deps.db))?.find((c) => c.chainId === CHAIN);
      return p !== undefined && p.indexedBlock >= Number(block);
    },
    { ...WAIT, what: `block ${block} indexed` },
  );
}

async function createPayment(body: Record<string, unknown>) {
  const orderId = `order-${Math.random()}`;
  const res = await svc.http("POST", "/payments", {
    body: { orderId, merchant: payout(), chainId: String(CHAIN), ...body },
    apiKey: merchant.apiKey,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const list = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(orderId)}`, { apiKey: merchant.apiKey });
  return list.body.data[0] as { paymentId: string; recipientAddress: Address };
}

async function deployToken(decimals: number): Promise<Address> {
  const h = chainHelpers(chain());
  const deployer = await h.newPayer();
  const hash = await h
    .walletOf(deployer)
    .deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Custom", "CSTM", decimals] });
  return getAddress((await h.wait(hash)).contractAddress!);
}

/** Mints `amount` of a token to a fresh payer, who transfers it to `to`: [mint receipt, transfer receipt]. */
async function payToken(token: Address, to: Address, amount: bigint) {
  const h = chainHelpers(chain());
  const payer = await h.newPayer();
  const w = h.walletOf(payer);
  const mint = await h.wait(
    await w.writeContract({ address: token, abi: testTokenAbi, functionName: "mint", args: [payer.address, amount] }),
  );
  const transfer = await h.wait(await w.writeContract({ address: token, abi: testTokenAbi, functionName: "transfer", args: [to, amount] }));
  return [mint, transfer] as const;
}

describe("indexing only our addresses", () => {
  it("a transfer between two foreign addresses of a registry token leaves no row", async () => {
    const usdc = chainHelpers(chain()).token("USDC").address;
    const [mint, transfer] = await payToken(usdc, payout(), 1_000_000n);
    await indexedThrough(transfer.blockNumber);
    expect(await rowsOf(mint.transactionHash, transfer.transactionHash)).toEqual([]);
  });

  it("a custom token (deployed here, priced by customPriceUsd) sent to a payment's address is indexed; its mint is not", async () => {
    const token = await deployToken(18);
    const p = await createPayment({ token, amount: "3.5", customPriceUsd: "2" });
    // Registered with the payment, before POST /payments answered.
    const { rows } = await svc.deps.db.pool.query(
      `SELECT kind, owner_id, merchant_id FROM watched_addresses WHERE chain_id = $1 AND address = $2`,
      [CHAIN, p.recipientAddress.toLowerCase()],
    );
    expect(rows).toEqual([{ kind: "payment", owner_id: p.paymentId, merchant_id: merchant.id }]);

    const [mint, transfer] = await payToken(token, p.recipientAddress, parseUnits("3.5", 18));
    const [row] = await waitFor(
      async () => {
        const r = await rowsOf(transfer.transactionHash);
        return r.length > 0 && r;
      },
      { ...WAIT, what: "the transfer's row" },
    );
    expect(row).toMatchObject({
      chainId: CHAIN,
      token: token.toLowerCase(),
      to: p.recipientAddress.toLowerCase(),
      amount: parseUnits("3.5", 18),
      blockNumber: transfer.blockNumber,
    });
    expect(await rowsOf(mint.transactionHash)).toEqual([]);
  });

  it("Gas Tank deposit addresses are registered when first shown", async () => {
    const res = await svc.http("GET", "/balance", { apiKey: merchant.apiKey });
    expect(res.status).toBe(200);
    const shown = (res.body.depositAddresses as { chainId: number; address: string }[]).map(
      (d) => `${d.chainId}:${d.address.toLowerCase()}`,
    );
    expect(shown.length).toBeGreaterThan(0);
    const { rows } = await svc.deps.db.pool.query(
      `SELECT chain_id || ':' || address AS key FROM watched_addresses WHERE kind = 'gas_tank' AND owner_id = $1 AND merchant_id = $2`,
      [merchant.id, merchant.id],
    );
    expect(rows.map((r) => r.key).sort()).toEqual(shown.sort());
  });

  it("an ERC-721-shaped Transfer (4 topics, no data) to our address is skipped and indexing goes on", async () => {
    const p = await createPayment({ token: chainHelpers(chain()).token("USDC").address, amount: "1" });
    const h = chainHelpers(chain());
    const sender = await h.newPayer();
    const w = h.walletOf(sender);
    // A contract whose fallback emits LOG4(Transfer topic, caller, calldata[0..32], 1) with empty data.
    const runtime = "6001600035337fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef60006000a400";
    const init = `0x602d80600b6000396000f3${runtime}` as Hex;
    const nft = getAddress((await h.wait(await w.sendTransaction({ data: init }))).contractAddress!);
    const nftTx = await h.wait(await w.sendTransaction({ to: nft, data: pad(p.recipientAddress) }));
    expect(nftTx.logs).toHaveLength(1);
    expect(nftTx.logs[0]!.topics).toHaveLength(4);
    // A real transfer to the same address after it: once its row is there, the ERC-721 block was indexed.
    const [, transfer] = await payToken(h.token("USDC").address, p.recipientAddress, 1_000_000n);
    await waitFor(async () => (await rowsOf(transfer.transactionHash)).length > 0, { ...WAIT, what: "the later transfer's row" });
    expect(await rowsOf(nftTx.transactionHash)).toEqual([]);
  });
});

describe("the indexer's in-memory set (src/watched-addresses.ts)", () => {
  it("learns a registration at once, and loses none across a killed connection (reconnect, LISTEN, full reload)", async () => {
    const name = `watched-test-${randomBytes(4).toString("hex")}`;
    const w = watchAddresses({ databaseUrl: svc.deps.config.DATABASE_URL!, applicationName: name, log: () => {} });
    const zero = "0x0000000000000000000000000000000000000000";
    const [a, b] = [payout().toLowerCase(), payout().toLowerCase()];
    // A different block hash each call: each check of an unknown address makes its own round trip.
    let n = 0;
    const concerns = (chainId: number, from: string, to: string) => w.concerns(chainId, `0x${(++n).toString(16)}`, from, to);
    try {
      await registerAddress(svc.deps.db.pool, { chainId: 1, address: a, kind: "payment", ownerId: "watched-test-a", merchantId: null });
      // Committed before the check: NOTIFY has reached the set by the end of its round trip.
      expect(await concerns(1, zero, a)).toBe(true);
      expect(await concerns(1, a, zero)).toBe(true);
      expect(await concerns(56, zero, a)).toBe(false);
      expect(await concerns(1, zero, b)).toBe(false);

      // Its connection killed (and gone), then b registered: seen through the new connection's reload or NOTIFY.
      const { rows } = await svc.deps.db.pool.query(
        `SELECT pg_terminate_backend(pid, 10000) AS done FROM pg_stat_activity WHERE application_name = $1`,
        [name],
      );
      expect(rows).toEqual([{ done: true }]);
      await registerAddress(svc.deps.db.pool, { chainId: 1, address: b, kind: "payment", ownerId: "watched-test-b", merchantId: null });
      expect(await concerns(1, zero, b)).toBe(true);
      expect(await concerns(1, zero, a)).toBe(true);
    } finally {
      await w.close();
    }
  });
});
