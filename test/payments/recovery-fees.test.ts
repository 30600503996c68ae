import { randomUUID } from "node:crypto";
import { getAddress, parseUnits, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { gasBurnerTokenAbi, gasBurnerTokenBytecode } from "../../abis/GasBurnerToken.js";
import { sweepGasCap } from "../../chains/gas-caps.js";
import { chainHelpers, waitFor } from "../helpers/chain.js";
import { startTestService, type TestService } from "../helpers/service.js";

// Recovery is no fee-free channel and no gas drain. A merchant cancels a payment, lets a customer pay its address
// anyway and recovers the funds: the sweep charges what a payment of that amount would (the merchant's 1%, the
// processing fee and the gas, out of the funds). A token whose transfer burns gas, sent to a payment's address and
// recovered, is never swept above the sweep's gas cap: the recovery fails and the settler spends nothing.

vi.setConfig({ testTimeout: 180_000 });
const WAIT = { timeout: 120_000 };
let svc: TestService;
let merchant: { id: string; apiKey: string };

beforeAll(async () => {
  svc = await startTestService();
  merchant = await svc.newMerchant(); // a direct merchant: 1% platform fee
  await svc.deps.db.pool.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', $2, $3)`,
    [merchant.id, "5000000", `test-credit:${randomUUID()}`],
  );
});
afterAll(async () => {
  await svc?.stop();
});

const chain = () => svc.deps.chains.find((c) => c.chainId === 777177)!;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
async function create(body: Record<string, unknown>) {
  const res = await svc.http("POST", "/payments", {
    body: { orderId: `order-${randomUUID()}`, chainId: "777177", ...body },
    apiKey: merchant.apiKey,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id = (res.body.url as string).split("/pay/")[1]!;
  const { rows } = await svc.deps.db.pool.query(`SELECT recipient_address FROM payments WHERE id = $1`, [id]);
  return { id, address: getAddress(rows[0].recipient_address) as Address };
}
async function listed(id: string) {
  const { rows } = await svc.deps.db.pool.query(`SELECT order_id FROM payments WHERE id = $1`, [id]);
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(rows[0].order_id)}`, { apiKey: merchant.apiKey });
  return res.body.data[0];
}

describe("recovering funds paid to a cancelled payment", () => {
  it("charges what a payment of the same amount would: the payout gets the same as from an ordinary payment", async () => {
    const h = chainHelpers(chain());
    const usdt = h.token("USDT").address;
    const to = payout();
    // The ordinary way, for comparison: a gasless 1,000 USDT payment's fees.
    const ordinary = await create({ merchant: to, token: usdt, amount: "1000", gasless: true });
    // (Its platform fee may be waived by the new-merchant promotion; a recovery never takes a promotion slot.)
    const { fees } = await listed(ordinary.id);
    const ordinaryFee = parseUnits(fees.processingFee, 6) + parseUnits(fees.gasFee, 6) + 10_000_000n;

    const { id, address } = await create({ merchant: to, token: usdt, amount: "1000", gasless: true });
    const cancelled = await svc.http("POST", `/v1/payments/${id}/cancel`, { apiKey: merchant.apiKey });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    await h.pay("USDT", address, parseUnits("1000", 6));
    await waitFor(async () => (await listed(id)).unexpectedFunds.length > 0, { ...WAIT, what: "the late funds listed" });

    const settlerAddress = privateKeyToAccount(svc.deps.env.SETTLER_PRIVATE_KEY as `0x${string}`).address;
    const before = await h.balanceOf("USDT", to);
    const r = await svc.http("POST", `/v1/payments/${id}/recover`, { body: { token: usdt }, apiKey: merchant.apiKey });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const done = await waitFor(
      async () => {
        const f = (await listed(id)).unexpectedFunds[0];
        return f.recovery?.status === "recovered" && f.recovery;
      },
      { ...WAIT, what: "the recovery recovered" },
    );
    const fee = BigInt(done.feeUnits);
    const got = (await h.balanceOf("USDT", to)) - before;
    expect(got).toBe(BigInt(done.recoveredUnits));
    expect(fee + got).toBe(parseUnits("1000", 6));
    // 1% of 1,000 plus the 0.10 USD processing fee at least, and the ordinary payment's fee give or take the gas price.
    expect(fee).toBeGreaterThanOrEqual(10_100_000n);
    expect(fee - ordinaryFee < 10_000n && ordinaryFee - fee < 10_000n, `fee ${fee}, ordinary ${ordinaryFee}`).toBe(true);
    const receipt = await h.pub.getTransactionReceipt({ hash: done.transactionHash });
    expect(receipt.from.toLowerCase()).toBe(settlerAddress.toLowerCase());
    console.log(
      `recovery of 1,000 USDT paid to a cancelled payment: payout ${Number(got) / 1e6}, fee ${Number(fee) / 1e6} (an ordinary payment's fee without promotion ${Number(ordinaryFee) / 1e6}); sweep gas ${receipt.gasUsed}`,
    );
  });
});

describe("recovering a token whose transfer burns gas", () => {
  it("is refused at the sweep's gas cap: the recovery fails, the settler spends no gas, the Gas Tank is not charged", async () => {
    const h = chainHelpers(chain());
    const owner = await h.newPayer();
    const w = h.walletOf(owner);
    const deployed = await h.wait(await w.deployContract({ abi: gasBurnerTokenAbi, bytecode: gasBurnerTokenBytecode, args: [8_000_000n] }));
    const burner = getAddress(deployed.contractAddress!);
    const { id, address } = await create({ merchant: payout(), token: h.token("USDT").address, amount: "1", gasless: true });
    await h.wait(
      await w.writeContract({ address: burner, abi: gasBurnerTokenAbi, functionName: "mint", args: [owner.address, 10n ** 18n] }),
    );
    await h.wait(
      await w.writeContract({
        address: burner,
        abi: gasBurnerTokenAbi,
        functionName: "transfer",
        args: [address, 10n ** 18n],
        gas: 10_000_000n,
      }),
    );
    await waitFor(async () => (await listed(id)).unexpectedFunds.some((f: any) => f.token === burner), {
      ...WAIT,
      what: "the burner token listed",
    });

    const settler = privateKeyToAccount(svc.deps.env.SETTLER_PRIVATE_KEY as `0x${string}`).address;
    const tank = async () =>
      (await svc.deps.db.pool.query(`SELECT sum(amount_micros)::text AS b FROM ledger_entries WHERE merchant_id = $1`, [merchant.id]))
        .rows[0].b;
    const [nonceBefore, tankBefore] = [await h.pub.getTransactionCount({ address: settler }), await tank()];
    const r = await svc.http("POST", `/v1/payments/${id}/recover`, { body: { token: burner }, apiKey: merchant.apiKey });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const failed = await waitFor(
      async () => {
        const f = (await listed(id)).unexpectedFunds.find((x: any) => x.token === burner);
        return f?.recovery?.status === "failed" && f.recovery;
      },
      { ...WAIT, what: "the burner recovery failed" },
    );
    const cap = sweepGasCap(1, svc.deps.config.SWEEP_GAS_CAP_PER_WALLET);
    expect(failed.error).toContain(`exceeds this operation's cap of ${cap}`);
    expect(failed.transactionHash).toBeNull();
    expect(await h.pub.getTransactionCount({ address: settler })).toBe(nonceBefore);
    expect(await tank()).toBe(tankBefore);
    console.log(`recovery of a token burning 8,000,000 gas a transfer: refused, settler gas spent 0 (cap ${cap})`);
  });
});
