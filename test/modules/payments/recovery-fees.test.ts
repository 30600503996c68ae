import { randomUUID } from "node:crypto";
import { erc20Abi, getAddress, parseEventLogs, parseUnits, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { gasBurnerTokenAbi, gasBurnerTokenBytecode } from "../../../abis/GasBurnerToken.js";
import { sweepGasCap } from "../../../chains/gas-caps.js";
import { ONE_USD18 } from "../../../core/money.js";
import { computeFees, RECOVERY_TANK_SHORT } from "../../../modules/payments/index.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Recovery is no fee-free channel and no gas drain. A merchant cancels a payment, lets a customer pay its
// address anyway and recovers the funds: the sweep charges what a payment of that amount would (the merchant's 1%, the
// processing fee and the gas, out of the funds). Tokens outside the registry are recovered only at the merchant's
// cost (its Gas Tank; 409 when the tank cannot pay), and a token whose transfer burns gas is never swept above the
// sweep's gas cap: the recovery fails and the settler spends nothing. Dust below a payment's fees is charged to the
// Gas Tank instead of staying stuck at the address.

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
async function create(body: Record<string, unknown>, m = merchant) {
  const res = await svc.http("POST", "/payments", {
    body: { orderId: `order-${randomUUID()}`, chainId: "777177", ...body },
    apiKey: m.apiKey,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id = (res.body.url as string).split("/pay/")[1]!;
  const { rows } = await svc.deps.db.pool.query(`SELECT recipient_address FROM payments WHERE id = $1`, [id]);
  return { id, address: getAddress(rows[0].recipient_address) as Address };
}
async function listed(id: string, m = merchant) {
  const { rows } = await svc.deps.db.pool.query(`SELECT order_id FROM payments WHERE id = $1`, [id]);
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(rows[0].order_id)}`, { apiKey: m.apiKey });
  return res.body.data[0];
}
const recover = (id: string, token: string, m = merchant) =>
  svc.http("POST", `/v1/payments/${id}/recover`, { body: { token }, apiKey: m.apiKey });
const tank = async (m: { id: string }) =>
  BigInt(
    (await svc.deps.db.pool.query(`SELECT COALESCE(sum(amount_micros), 0)::text AS b FROM ledger_entries WHERE merchant_id = $1`, [m.id]))
      .rows[0].b,
  );
const fundTank = (m: { id: string }, micros: bigint) =>
  svc.deps.db.pool.query(`INSERT INTO ledger_entries (merchant_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', $2, $3)`, [
    m.id,
    micros.toString(),
    `test-credit:${randomUUID()}`,
  ]);
const settler = () => privateKeyToAccount(svc.deps.env.SETTLER_PRIVATE_KEY as `0x${string}`).address;
/** The recovery of `token` once it reached `status`. */
const recoveryOf = (id: string, token: string, status: string, m = merchant) =>
  waitFor(
    async () => {
      const f = ((await listed(id, m)).unexpectedFunds as any[]).find((x) => x.token === getAddress(token));
      return f?.recovery?.status === status && f.recovery;
    },
    { ...WAIT, what: `the recovery ${status}` },
  );
/** A GasBurnerToken (outside the registry) burning `burn` gas a transfer, `units` of it sent to `to` and indexed. */
async function burnerAt(to: Address, burn: bigint, units: bigint, id: string, m = merchant): Promise<Address> {
  const h = chainHelpers(chain());
  const owner = await h.newPayer();
  const w = h.walletOf(owner);
  const deployed = await h.wait(await w.deployContract({ abi: gasBurnerTokenAbi, bytecode: gasBurnerTokenBytecode, args: [burn] }));
  const token = getAddress(deployed.contractAddress!);
  await h.wait(await w.writeContract({ address: token, abi: gasBurnerTokenAbi, functionName: "mint", args: [owner.address, units] }));
  // The attacker's own transfer burns the gas: that is its gas, not ours.
  await h.wait(
    await w.writeContract({ address: token, abi: gasBurnerTokenAbi, functionName: "transfer", args: [to, units], gas: burn + 1_000_000n }),
  );
  await waitFor(async () => ((await listed(id, m)).unexpectedFunds as any[]).some((f) => f.token === token), {
    ...WAIT,
    what: "the token listed",
  });
  return token;
}
/** Gas the settler spent per recovery, the worst seen in this file (printed at the end). */
const gasPerRecovery: bigint[] = [];
afterAll(() => {
  const worst = gasPerRecovery.reduce((a, b) => (a > b ? a : b), 0n);
  console.log(
    `worst settler gas per recovery in this file: ${worst} (cap ${svc ? sweepGasCap(1, svc.deps.config.SWEEP_GAS_CAP_PER_WALLET) : "?"}); per recovery: ${gasPerRecovery.join(", ")}`,
  );
});

describe("recovering funds paid to a cancelled payment", () => {
  it("charges exactly what a payment of the same amount would: the payout gets what an ordinary payment pays out", async () => {
    const h = chainHelpers(chain());
    const usdt = h.token("USDT").address;
    const to = payout();
    // The ordinary way, for comparison: a gasless 1,000 USDT payment's fees (fees.ts, without the new-merchant
    // promotion, which a recovery never takes). This chain has no native coin in the registry: no gas fee.
    const ordinary = await create({ merchant: to, token: usdt, amount: "1000", gasless: true });
    const { fees } = await listed(ordinary.id);
    const expected = computeFees({
      amountUnits: parseUnits("1000", 6),
      decimals: 6,
      priceUsd18: ONE_USD18,
      platformFeeBps: 100,
      promo: false,
      gasFeeUsd18: 0n,
      mode: "gasless",
    });
    expect(parseUnits(fees.gasFee, 6)).toBe(expected.gasFeeUnits);
    expect(parseUnits(fees.processingFee, 6)).toBe(expected.processingFeeUnits);

    const { id, address } = await create({ merchant: to, token: usdt, amount: "1000", gasless: true });
    const cancelled = await svc.http("POST", `/v1/payments/${id}/cancel`, { apiKey: merchant.apiKey });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    await h.pay("USDT", address, parseUnits("1000", 6));
    await waitFor(async () => (await listed(id)).unexpectedFunds.length > 0, { ...WAIT, what: "the late funds listed" });

    const before = { payout: await h.balanceOf("USDT", to), tank: await tank(merchant) };
    const r = await recover(id, usdt);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const done = await recoveryOf(id, usdt, "recovered");
    const got = (await h.balanceOf("USDT", to)) - before.payout;
    // 1,000 - 10 (1%) - 0.10 (processing) = 989.9, as the ordinary payment pays out; the fee recipient got the rest.
    expect(done).toMatchObject({ feeUnits: expected.totalFeeUnits.toString(), gasTankFee: "0", recoveredUnits: got.toString() });
    expect(got).toBe(expected.merchantReceivesUnits);
    expect(got).toBe(parseUnits("989.9", 6));
    expect(await h.balanceOf("USDT", address)).toBe(0n);
    expect(await tank(merchant)).toBe(before.tank);
    // The sweep paid the fee to the fee recipient (read from the sweep's own transfers: other files share that account).
    const receipt = await h.pub.getTransactionReceipt({ hash: done.transactionHash });
    expect(receipt.from.toLowerCase()).toBe(settler().toLowerCase());
    const feeRecipient = (svc.deps.config.FEE_RECIPIENT ?? settler()).toLowerCase();
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).filter(
      (l) => l.address.toLowerCase() === usdt.toLowerCase() && l.args.from.toLowerCase() === address.toLowerCase(),
    );
    expect(transfers.map((l) => [l.args.to.toLowerCase(), l.args.value]).sort()).toEqual(
      [
        [to.toLowerCase(), expected.merchantReceivesUnits],
        [feeRecipient, expected.totalFeeUnits],
      ].sort(),
    );
    gasPerRecovery.push(receipt.gasUsed);
    console.log(
      `recovery of 1,000 USDT paid to a cancelled payment: payout ${Number(got) / 1e6}, fee ${Number(expected.totalFeeUnits) / 1e6} (as an ordinary payment); sweep gas ${receipt.gasUsed}`,
    );
  });

  it("dust below a payment's fees is recovered in full at the Gas Tank's cost, and refused while the tank cannot pay", async () => {
    const h = chainHelpers(chain());
    const usdt = h.token("USDT").address;
    const to = payout();
    const poor = await svc.newMerchant({ name: "Dust" });
    const { id, address } = await create({ merchant: to, token: usdt, amount: "1", gasless: true }, poor);
    expect((await svc.http("POST", `/v1/payments/${id}/cancel`, { apiKey: poor.apiKey })).status).toBe(200);
    await h.pay("USDT", address, 50_000n); // 0.05 USDT: less than the 0.10 processing fee alone
    await waitFor(async () => (await listed(id, poor)).unexpectedFunds.length > 0, { ...WAIT, what: "the dust listed" });

    expect(await recover(id, usdt, poor)).toMatchObject({ status: 409, body: { success: false, error: RECOVERY_TANK_SHORT, data: null } });
    // A Gas Tank payment of 0.05 USDT would be charged 0.0005 (1%) + 0.10.
    const charge = computeFees({
      amountUnits: 50_000n,
      decimals: 6,
      priceUsd18: ONE_USD18,
      platformFeeBps: 100,
      promo: false,
      gasFeeUsd18: 0n,
      mode: "gasTank",
    }).gasTankFeeMicros;
    expect(charge).toBe(100_500n);
    await fundTank(poor, 1_000_000n);
    expect((await recover(id, usdt, poor)).status).toBe(200);
    const done = await recoveryOf(id, usdt, "recovered", poor);
    expect(done).toMatchObject({ feeUnits: "0", gasTankFee: "0.1005", recoveredUnits: "50000" });
    expect(await h.balanceOf("USDT", to)).toBe(50_000n);
    expect(await tank(poor)).toBe(1_000_000n - charge);
    gasPerRecovery.push((await h.pub.getTransactionReceipt({ hash: done.transactionHash })).gasUsed);
  });
});

describe("tokens outside the registry", () => {
  it("a well-behaved one is recovered in full at the Gas Tank's cost; refused (409) while the tank cannot pay", async () => {
    const h = chainHelpers(chain());
    const poor = await svc.newMerchant({ name: "Own token" });
    const to = payout();
    const { id, address } = await create({ merchant: to, token: h.token("USDT").address, amount: "1", gasless: true }, poor);
    const token = await burnerAt(address, 0n, 7n * 10n ** 18n, id, poor);

    // The settler would pay for it: refused until the merchant can.
    expect(await recover(id, token, poor)).toMatchObject({ status: 409, body: { success: false, error: RECOVERY_TANK_SHORT, data: null } });
    expect((await svc.deps.db.pool.query(`SELECT 1 FROM fund_recoveries WHERE payment_id = $1`, [id])).rowCount).toBe(0);

    await fundTank(poor, 250_000n);
    expect((await recover(id, token, poor)).status).toBe(200);
    const done = await recoveryOf(id, token, "recovered", poor);
    // The processing fee and the gas of the sweep's whole cap (no native coin price on this chain: no gas fee).
    expect(done).toMatchObject({ feeUnits: "0", gasTankFee: "0.1", recoveredUnits: (7n * 10n ** 18n).toString() });
    expect(await h.pub.readContract({ address: token, abi: gasBurnerTokenAbi, functionName: "balanceOf", args: [to] })).toBe(
      7n * 10n ** 18n,
    );
    expect(await tank(poor)).toBe(150_000n);
    const { rows } = await svc.deps.db.pool.query(
      `SELECT kind, amount_micros FROM ledger_entries WHERE merchant_id = $1 AND kind <> 'adjustment'`,
      [poor.id],
    );
    expect(rows).toEqual([{ kind: "recovery_fee", amount_micros: "-100000" }]);
    gasPerRecovery.push((await h.pub.getTransactionReceipt({ hash: done.transactionHash })).gasUsed);
  });

  it("one whose transfer burns 20,000,000 gas is refused at the cap: the settler spends nothing, the Gas Tank is not charged", async () => {
    const h = chainHelpers(chain());
    const poor = await svc.newMerchant({ name: "Burner" });
    const { id, address } = await create({ merchant: payout(), token: h.token("USDT").address, amount: "1", gasless: true }, poor);
    const burner = await burnerAt(address, 20_000_000n, 10n ** 18n, id, poor);
    const cap = sweepGasCap(1, svc.deps.config.SWEEP_GAS_CAP_PER_WALLET);

    // Before the fix the settler signed this sweep at 20.1 M gas, free: now an empty tank is refused up front ...
    expect(await recover(id, burner, poor)).toMatchObject({ status: 409, body: { success: false, error: RECOVERY_TANK_SHORT } });
    // ... and a funded one is never signed above the cap.
    await fundTank(poor, 1_000_000n);
    const [nonceBefore, balanceBefore] = [
      await h.pub.getTransactionCount({ address: settler() }),
      await h.pub.getBalance({ address: settler() }),
    ];
    expect((await recover(id, burner, poor)).status).toBe(200);
    const failed = await recoveryOf(id, burner, "failed", poor);
    expect(failed.error).toContain(`exceeds this operation's cap of ${cap}`);
    expect(failed).toMatchObject({ transactionHash: null, feeUnits: null, gasTankFee: null });
    expect(await h.pub.getTransactionCount({ address: settler() })).toBe(nonceBefore);
    expect(await h.pub.getBalance({ address: settler() })).toBe(balanceBefore);
    expect(await tank(poor)).toBe(1_000_000n);
    gasPerRecovery.push(0n);
    console.log(`recovery of a token burning 20,000,000 gas a transfer: refused, settler gas spent 0 (cap ${cap})`);
  });

  it("one that burns a little less than the cap allows is swept at the merchant's cost: the settler spends at most the cap", async () => {
    const h = chainHelpers(chain());
    const poor = await svc.newMerchant({ name: "Near cap" });
    const { id, address } = await create({ merchant: payout(), token: h.token("USDT").address, amount: "1", gasless: true }, poor);
    const cap = sweepGasCap(1, svc.deps.config.SWEEP_GAS_CAP_PER_WALLET);
    const burner = await burnerAt(address, cap - 200_000n, 10n ** 18n, id, poor);
    await fundTank(poor, 1_000_000n);
    expect((await recover(id, burner, poor)).status).toBe(200);
    const done = await recoveryOf(id, burner, "recovered", poor);
    const receipt = await h.pub.getTransactionReceipt({ hash: done.transactionHash });
    expect(receipt.from.toLowerCase()).toBe(settler().toLowerCase());
    expect(receipt.gasUsed).toBeLessThanOrEqual(cap);
    const tx = await h.pub.getTransaction({ hash: done.transactionHash });
    expect(tx.gas).toBeLessThanOrEqual(cap);
    expect(done.gasTankFee).toBe("0.1");
    expect(await tank(poor)).toBe(900_000n);
    gasPerRecovery.push(receipt.gasUsed);
    console.log(
      `recovery of a token burning ${cap - 200_000n} gas a transfer: swept, settler gas ${receipt.gasUsed} (limit ${tx.gas}, cap ${cap})`,
    );
  });
});
