import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { parseEther, parseUnits, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { formatAmount } from "../../core/money.js";
import { chainHelpers, waitFor } from "../helpers/chain.js";
import { startTestService, type TestService } from "../helpers/service.js";

// The money path end to end, through HTTP only: create -> pay on Anvil -> indexed -> detected ->
// settled by the factory -> completed, with the merchant wallet checked to the smallest unit.
let svc: TestService;
let merchant: { id: string; apiKey: string };
beforeAll(async () => {
  svc = await startTestService({ env: { GAS_TANK_CONFIRMATIONS: "1" } });
  merchant = await svc.newMerchant();
});
afterAll(() => svc?.stop());
vi.setConfig({ testTimeout: 300_000 });

const chainOf = (id: number) => svc.deps.chains.find((c) => c.chainId === id)!;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;

async function create(body: Record<string, unknown>, apiKey = merchant.apiKey) {
  const res = await svc.http("POST", "/payments", { body: { orderId: `order-${Math.random()}`, ...body }, apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.url as string).split("/pay/")[1]!;
}
async function get(paymentId: string, apiKey = merchant.apiKey) {
  const { rows } = await svc.deps.db.pool.query(`SELECT order_id FROM payments WHERE id = $1`, [paymentId]);
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(rows[0].order_id)}`, { apiKey });
  return res.body.data[0];
}
// Generous: on a loaded 2-core machine Ponder can take tens of seconds to index a block.
const WAIT = { timeout: 120_000 };
async function until(paymentId: string, status: string, timeout = WAIT.timeout) {
  return waitFor(
    async () => {
      const p = await get(paymentId);
      return p?.status === status && p;
    },
    { timeout, what: `payment ${paymentId} to be ${status}` },
  );
}
async function fundGasTank(chainId: number, usdt: string, apiKey = merchant.apiKey) {
  const bal = await svc.http("GET", "/balance", { apiKey });
  const dep = bal.body.depositAddresses.find((d: any) => d.chainId === chainId);
  const h = chainHelpers(chainOf(chainId));
  const symbol = chainId === 137 ? "USDT0" : "USDT";
  await h.pay(symbol, dep.address, parseUnits(usdt, 6));
}
async function balance(apiKey = merchant.apiKey): Promise<string> {
  return (await svc.http("GET", "/balance", { apiKey })).body.balance;
}
async function webhookEvents(paymentId: string) {
  const { rows } = await svc.deps.db.pool.query(`SELECT to_status FROM payment_events WHERE payment_id = $1 ORDER BY id`, [paymentId]);
  return rows.map((r) => r.to_status);
}

describe("Gas Tank mode", () => {
  it("pays in full -> completed; the merchant receives the whole amount and the Gas Tank pays the fees", async () => {
    await fundGasTank(137, "5");
    await waitFor(async () => (await balance()) === "5.000000", { ...WAIT, what: "Gas Tank credit" });
    const chain = chainOf(137);
    const h = chainHelpers(chain);
    const usdc = h.token("USDC");
    const to = payout();
    const id = await create({ merchant: to, chainId: "137", token: usdc.address, amount: "25.5" });
    const created = await get(id);
    expect(created.status).toBe("pending");
    const receipt = await h.pay("USDC", created.recipientAddress, parseUnits("25.5", 6));
    const minedSeenAt = Date.now();
    const done = await until(id, "completed");
    const { rows: t } = await svc.deps.db.pool.query(`SELECT paid_at FROM payments WHERE id = $1`, [id]);
    console.log(
      `[measure] mined -> paid: ${t[0].paid_at.getTime() - minedSeenAt} ms; mined -> completed seen: ${Date.now() - minedSeenAt} ms`,
    );
    expect(await h.balanceOf("USDC", to)).toBe(parseUnits("25.5", 6));
    expect(done.transaction.hash).toBe(receipt.transactionHash);
    expect(done.completedAt).toBeGreaterThan(done.createdAt);
    expect(await webhookEvents(id)).toEqual(["paid", "deploying_wallet", "completed"]);
    // Fees came from the Gas Tank: processing 0.10 + gas, platform fee waived by the promotion.
    const { rows } = await svc.deps.db.pool.query(`SELECT gas_tank_fee_micros FROM payments WHERE id = $1`, [id]);
    const fee = BigInt(rows[0].gas_tank_fee_micros);
    expect(fee).toBeGreaterThanOrEqual(100_000n);
    expect(await balance()).toBe(formatAmount(5_000_000n - fee, 6, { fixed: true }));
  });

  it("Gas Tank empty -> awaiting_gas -> funded -> completed (no payment lost)", async () => {
    const m = await svc.newMerchant({ name: "Empty tank" });
    const chain = chainOf(777177);
    const h = chainHelpers(chain);
    const to = payout();
    // Service chain: no gas fee, promotion waives the platform fee: the 0.10 USD processing fee remains.
    const id = await create({ merchant: to, chainId: "777177", token: h.token("USDC").address, amount: "3" }, m.apiKey);
    const p = await get(id, m.apiKey);
    await h.pay("USDC", p.recipientAddress, parseUnits("3", 6));
    await waitFor(async () => (await get(id, m.apiKey)).status === "awaiting_gas", { ...WAIT, what: "awaiting_gas" });
    const { rows } = await svc.deps.db.pool.query(`SELECT payload FROM webhook_deliveries WHERE payment_id = $1`, [id]);
    // The outbox row exists only when the merchant subscribed; the event is in the audit trail either way.
    expect(await webhookEvents(id)).toContain("awaiting_gas");
    if (rows[0])
      expect(rows[0].payload).toMatchObject({
        event: "payment.awaiting_gas",
        estimatedFeeUsdt: "0.1",
        gasTankBalance: "0",
        requiredTopUp: "0.1",
      });
    await fundGasTank(777177, "1", m.apiKey);
    await waitFor(async () => (await get(id, m.apiKey)).status === "completed", { ...WAIT, what: "completed after funding" });
    expect(await h.balanceOf("USDC", to)).toBe(parseUnits("3", 6));
    expect(await balance(m.apiKey)).toBe("0.900000");
  });
});

describe("fee modes, exact to the smallest unit", () => {
  it("gasless with the USDT-like token: the merchant receives amount - fees, the fee recipient the fees", async () => {
    const chain = chainOf(777177);
    const h = chainHelpers(chain);
    const to = payout();
    const treasury = svc.deps.config.FEE_RECIPIENT as Address;
    const id = await create({ merchant: to, chainId: "777177", token: h.token("USDT").address, amount: "10", gasless: true });
    const p = await get(id);
    expect(p.fees).toEqual({ platformFee: "0", gasFee: "0", processingFee: "0.1", totalFee: "0.1", feePercentage: 0, agentFee: "0" });
    await h.pay("USDT", p.recipientAddress, parseUnits("10", 6));
    await until(id, "completed");
    expect(await h.balanceOf("USDT", to)).toBe(9_900_000n);
    // Other test files pay the same fee recipient at the same time: read this sweep's own event.
    const { sweep } = svc.deps.db.views;
    const rows = await svc.deps.db.orm
      .select({ fee: sweep.fee, feeRecipient: sweep.feeRecipient, amount: sweep.amount })
      .from(sweep)
      .where(eq(sweep.wallet, p.recipientAddress.toLowerCase() as Hex));
    expect(rows).toEqual([{ fee: 100000n, feeRecipient: treasury.toLowerCase(), amount: 9900000n }]);
  });

  it("payer covers the fee: the payer sends amount + fees and the merchant receives exactly the amount", async () => {
    const chain = chainOf(777177);
    const h = chainHelpers(chain);
    const to = payout();
    const id = await create({ merchant: to, chainId: "777177", token: h.token("USDC").address, amount: "7.25", payerCoversFee: true });
    const p = await get(id);
    // Not enough: amount without the fee keeps it pending.
    await h.pay("USDC", p.recipientAddress, parseUnits("7.25", 6));
    await new Promise((r) => setTimeout(r, 2500));
    expect((await get(id)).status).toBe("pending");
    await h.pay("USDC", p.recipientAddress, parseUnits("0.1", 6));
    await until(id, "completed");
    expect(await h.balanceOf("USDC", to)).toBe(7_250_000n);
  });

  it("direct merchant after the promotion pays the 1% platform fee (gasless)", async () => {
    const m = await svc.newMerchant({ name: "Promo used" });
    // 30 completed promotion payments already (as history), so the next one pays the platform fee.
    await svc.deps.db.pool.query(
      `INSERT INTO payments (id, merchant_id, order_id, status, chain_id, token_address, token_symbol, token_decimals, amount_units, due_units,
         merchant_address, recipient_address, salt, price_source, platform_fee_bps, promo_applied, expires_at)
       SELECT gen_random_uuid(), $1::uuid, 'old-' || i, 'completed', 777177, '0x0', 'USDC', 6, 1, 1, '0x0', '0xold' || i || $1::text, '0x', 'stablecoin', 100, true, now()
         FROM generate_series(1, 30) i`,
      [m.id],
    );
    expect((await svc.http("GET", "/promo-status", { apiKey: m.apiKey })).body).toEqual({
      freeTransactions: { eligible: false, used: 30, remaining: 0 },
    });
    const h = chainHelpers(chainOf(777177));
    const to = payout();
    const id = await create(
      { merchant: to, chainId: "777177", token: h.token("USDC").address, amount: "123.456789", gasless: true },
      m.apiKey,
    );
    const p = await get(id, m.apiKey);
    // 1% of 123.456789 = 1.23456789 -> rounded up to 1.234568; + 0.10 processing.
    expect(p.fees).toEqual({
      platformFee: "1.234568",
      gasFee: "0",
      processingFee: "0.1",
      totalFee: "1.334568",
      feePercentage: 1,
      agentFee: "0",
    });
    await h.pay("USDC", p.recipientAddress, parseUnits("123.456789", 6));
    await waitFor(async () => (await get(id, m.apiKey)).status === "completed", { ...WAIT, what: "completed" });
    expect(await h.balanceOf("USDC", to)).toBe(123_456_789n - 1_334_568n);
  });
});

describe("settlement failure", () => {
  it("gasless fees above the amount received -> failed (payment.failed), funds left for the merchant to withdraw", async () => {
    const h = chainHelpers(chainOf(777177));
    // 0.05 USDT gasless: the 0.10 USD processing fee alone exceeds it.
    const id = await create({ merchant: payout(), chainId: "777177", token: h.token("USDT").address, amount: "0.05", gasless: true });
    const p = await get(id);
    await h.pay("USDT", p.recipientAddress, parseUnits("0.05", 6));
    const failed = await until(id, "failed");
    expect(failed.receivedAmount).toBe("0.05");
    expect(await webhookEvents(id)).toEqual(["paid", "failed"]);
    const { rows } = await svc.deps.db.pool.query(`SELECT failure_reason FROM payments WHERE id = $1`, [id]);
    expect(rows[0].failure_reason).toBe("fees exceed the amount received");
  });
});

describe("partial, over, expired, native", () => {
  it("partial payment stays pending past expiry, then the merchant withdraws it", async () => {
    const h = chainHelpers(chainOf(777177));
    const to = payout();
    const id = await create({
      merchant: to,
      chainId: "777177",
      token: h.token("USDC").address,
      amount: "50",
      expiresAt: svc.clock.now() + 60_000,
    });
    const p = await get(id);
    await h.pay("USDC", p.recipientAddress, parseUnits("20", 6));
    await waitFor(async () => (await get(id)).receivedAmount === "20", { ...WAIT, what: "partial amount recorded" });
    svc.clock.advance(120_000);
    await svc.processors!.runOnce("expiry");
    expect((await get(id)).status).toBe("pending");
    const w = await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: merchant.apiKey });
    expect(w.status).toBe(200);
    expect(w.body).toMatchObject({ success: true, data: { status: "withdrawing", receivedAmount: "20" } });
    await until(id, "withdrawn");
    expect(await h.balanceOf("USDC", to)).toBe(20_000_000n);
    const { rows } = await svc.deps.db.pool.query(`SELECT withdrawn_units, withdrawal_tx_hash FROM payments WHERE id = $1`, [id]);
    expect(rows[0].withdrawn_units).toBe("20000000");
    expect(rows[0].withdrawal_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    // Nothing left to withdraw now.
    expect((await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: merchant.apiKey })).status).toBe(409);
  });

  it("overpayment is recorded and settled to the merchant", async () => {
    await fundGasTank(777177, "1");
    const h = chainHelpers(chainOf(777177));
    const to = payout();
    const id = await create({ merchant: to, chainId: "777177", token: h.token("USDT").address, amount: "1" });
    const p = await get(id);
    await h.pay("USDT", p.recipientAddress, parseUnits("1.5", 6));
    await until(id, "completed");
    expect((await get(id)).receivedAmount).toBe("1.5");
    const { rows } = await svc.deps.db.pool.query(`SELECT overpayment_units FROM payments WHERE id = $1`, [id]);
    expect(rows[0].overpayment_units).toBe("500000");
    expect(await h.balanceOf("USDT", to)).toBe(1_500_000n);
  });

  it("expires when nothing was received", async () => {
    const h = chainHelpers(chainOf(777177));
    const id = await create({
      merchant: payout(),
      chainId: "777177",
      token: h.token("USDT").address,
      amount: "1",
      expiresAt: svc.clock.now() + 5_000,
    });
    await svc.processors!.runOnce("expiry");
    expect((await get(id)).status).toBe("pending");
    svc.clock.advance(10_000);
    await svc.processors!.runOnce("expiry");
    expect((await get(id)).status).toBe("expired");
    expect(await webhookEvents(id)).toEqual(["expired"]);
  });

  it("native coin (MATIC on 137), priced by the oracle, watched by balance", async () => {
    const chain = chainOf(137);
    const h = chainHelpers(chain);
    await fundGasTank(137, "2");
    const to = payout();
    const id = await create({
      merchant: to,
      chainId: "137",
      token: "0x0000000000000000000000000000000000000000",
      amount: "3.000000000000000001",
    });
    const p = await get(id);
    expect(p.priceSource).toBe("trusted_oracle");
    expect(p.token).toEqual({ address: "0x0000000000000000000000000000000000000000", symbol: "MATIC", decimals: 18 });
    await h.sendNative(p.recipientAddress, parseEther("3.000000000000000001"));
    await until(id, "completed");
    expect(await h.pub.getBalance({ address: to })).toBe(parseEther("3.000000000000000001"));
  });
});
