import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { getAddress, parseEther, parseUnits, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { formatAmount } from "../../../core/money.js";
import { createAgent } from "../../../modules/agents/index.js";
import { gasTankBalance, settlementFeeCharged, usdt } from "../../../modules/gas-tank/index.js";
import { PROCESSING_FEE_USD18, type PaymentRow } from "../../../modules/payments/index.js";
import { resolveNativePriceUsd } from "../../../modules/pricing/index.js";
import { PAYMENT_EVENTS } from "../../../modules/webhooks/index.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { startReceiver, type Receiver } from "../webhooks/helpers/receiver.js";
import { driveTo } from "./fixtures/payment-states.js";

// The money path end to end: create -> pay on Anvil -> indexed -> detected -> settled by the factory ->
// completed, with the merchant wallet checked to the smallest unit. Payments are created and read over HTTP;
// the test waits on the database (GET /balance allows 60 requests a minute: no route to poll).
let svc: TestService;
let receiver: Receiver;
beforeAll(async () => {
  // Gas Tank deposits count after 1 confirmation: this service's own setting (process.env is left alone).
  svc = await startTestService({ env: { GAS_TANK_CONFIRMATIONS: "1" } });
  receiver = await startReceiver();
});
afterAll(async () => {
  await svc?.stop();
  await receiver?.close();
});
vi.setConfig({ testTimeout: 300_000 });

type Shop = { id: string; apiKey: string };
const chainOf = (id: number) => svc.deps.chains.find((c) => c.chainId === id)!;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const pool = () => svc.deps.db.pool;

/**
 * A merchant of the calling test's own (its Gas Tank, promotion slots and payments are no other test's), with a
 * webhook subscribed to every payment event: each event the service emits leaves its row in the outbox.
 */
async function shop(name: string): Promise<Shop> {
  const m = await svc.newMerchant({ name });
  const res = await svc.http("PUT", "/v1/webhooks", { apiKey: m.apiKey, body: { url: receiver.url, events: [...PAYMENT_EVENTS] } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return m;
}

async function create(m: Shop, body: Record<string, unknown>) {
  const res = await svc.http("POST", "/payments", { body: { orderId: `order-${Math.random()}`, ...body }, apiKey: m.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.url as string).split("/pay/")[1]!;
}
async function row(paymentId: string): Promise<PaymentRow> {
  return (await pool().query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [paymentId])).rows[0]!;
}
/** The payment as GET /v1/payments lists it. */
async function get(m: Shop, paymentId: string) {
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent((await row(paymentId)).order_id)}`, { apiKey: m.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.find((p: any) => p.paymentId === paymentId);
}
// Generous: on a loaded 2-core machine Ponder can take tens of seconds to index a block.
const WAIT = { timeout: 120_000 };
const FINAL = ["completed", "failed", "withdrawn", "cancelled"];
/** Waits (on the database) for the payment to reach `status`, then reads it over HTTP; fails at once on another final status. */
async function until(m: Shop, paymentId: string, status: string) {
  await waitFor(
    async () => {
      const now = (await row(paymentId)).status;
      if (now !== status && FINAL.includes(now)) throw new Error(`payment ${paymentId} is ${now}, not ${status}`);
      return now === status;
    },
    { ...WAIT, what: `payment ${paymentId} to be ${status}` },
  );
  return get(m, paymentId);
}
/** Funds the Gas Tank on a chain and waits for the ledger to credit it (not for a balance: a settlement may debit at once). */
async function fundGasTank(m: Shop, chainId: number, amount: string) {
  const deposits = async () =>
    BigInt(
      (
        await pool().query(
          `SELECT COALESCE(sum(amount_micros), 0)::text AS s FROM ledger_entries WHERE merchant_id = $1 AND kind = 'gas_tank_deposit'`,
          [m.id],
        )
      ).rows[0].s,
    );
  const before = await deposits();
  const bal = await svc.http("GET", "/balance", { apiKey: m.apiKey });
  expect(bal.status, JSON.stringify(bal.body)).toBe(200);
  const dep = bal.body.depositAddresses.find((d: any) => d.chainId === chainId);
  const h = chainHelpers(chainOf(chainId));
  await h.pay(chainId === 137 ? "USDT0" : "USDT", dep.address, parseUnits(amount, 6));
  const expected = before + parseUnits(amount, 6);
  await waitFor(async () => (await deposits()) === expected, { ...WAIT, what: `Gas Tank credit of ${amount}` });
}
async function balance(m: Shop): Promise<string> {
  const res = await svc.http("GET", "/balance", { apiKey: m.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.balance;
}
/** The audit trail of the payment's transitions. */
async function transitions(paymentId: string) {
  const { rows } = await pool().query(`SELECT to_status FROM payment_events WHERE payment_id = $1 ORDER BY id`, [paymentId]);
  return rows.map((r) => r.to_status);
}
/** The webhook outbox rows of the payment, oldest first. */
async function outbox(paymentId: string): Promise<{ event: string; payload: Record<string, any> }[]> {
  const { rows } = await pool().query(`SELECT event, payload FROM webhook_deliveries WHERE payment_id = $1 ORDER BY created_at, event`, [
    paymentId,
  ]);
  return rows;
}

describe("Gas Tank mode", () => {
  it("pays in full -> completed; the merchant receives the whole amount and the Gas Tank pays the fees", async () => {
    const m = await shop("Gas Tank");
    await fundGasTank(m, 137, "5");
    expect(await balance(m)).toBe("5.000000");
    const chain = chainOf(137);
    const h = chainHelpers(chain);
    const usdc = h.token("USDC");
    const to = payout();
    const id = await create(m, { merchant: to, chainId: "137", token: usdc.address, amount: "25.5" });
    const created = await get(m, id);
    expect(created.status).toBe("pending");
    // The fee the Gas Tank pays (fees.ts, Gas Tank mode): the USD value of processing + gas + platform fee, in USDT
    // micros, rounded up once. Platform fee waived by the promotion; USDC is a stablecoin (1 USD = 10^6 units),
    // so the quoted gas fee in USDC units, ceil(gasUsd18 / 10^12), is its value in micros, and the 0.10 USD
    // processing fee is 100000 micros exactly: fee = 100000 + gas fee units.
    expect(created.priceSource).toBe("stablecoin");
    expect(created.fees).toMatchObject({ platformFee: "0", processingFee: "0.1", feePercentage: 0, agentFee: "0" });
    const gasFeeUnits = parseUnits(created.fees.gasFee, 6);
    expect(gasFeeUnits).toBeGreaterThan(0n); // chain 137 has a native coin: a gas fee applies
    const processingMicros = PROCESSING_FEE_USD18 / 10n ** 12n;
    expect(processingMicros).toBe(100_000n);
    const fee = processingMicros + gasFeeUnits;
    expect(parseUnits(created.fees.totalFee, 6)).toBe(fee);

    const receipt = await h.pay("USDC", created.recipientAddress, parseUnits("25.5", 6));
    const minedSeenAt = Date.now();
    const done = await until(m, id, "completed");
    const paid = await row(id);
    console.log(
      `[measure] mined -> paid: ${paid.paid_at!.getTime() - minedSeenAt} ms; mined -> completed seen: ${Date.now() - minedSeenAt} ms`,
    );
    // The settlement's status changes, each with its audit row (modules/settlement/transition.ts).
    const { rows: trail } = await pool().query(
      `SELECT e.from_status, e.to_status FROM settlement_events e JOIN settlements s ON s.id = e.settlement_id
        WHERE $1 = ANY(s.payment_ids) ORDER BY e.id`,
      [id],
    );
    expect(trail.map((r) => `${r.from_status}->${r.to_status}`)).toEqual(["signed->sent", "sent->mined"]);
    expect(await h.balanceOf("USDC", to)).toBe(parseUnits("25.5", 6));
    expect(done.transaction.hash).toBe(receipt.transactionHash);
    expect(done.completedAt).toBeGreaterThan(done.createdAt);
    expect(await transitions(id)).toEqual(["paid", "deploying_wallet", "completed"]);
    // That fee quoted on the payment and debited when reserved; at completion its gas part is charged again at what the
    // mined sweep cost: the payment's share of the gas at the effective price, at POL's price (modules/settlement/gas-true-up.ts).
    expect(BigInt(paid.gas_tank_fee_micros)).toBe(fee);
    const { rows: mined } = await pool().query(
      `SELECT gas_used, effective_gas_price, cardinality(payment_ids) AS batch FROM settlements WHERE $1 = ANY(payment_ids) AND status = 'mined'`,
      [id],
    );
    const share = (BigInt(mined[0].gas_used) + BigInt(mined[0].batch) - 1n) / BigInt(mined[0].batch);
    const pol = (await resolveNativePriceUsd(svc.deps, 137, undefined, { cached: true }))!.priceUsd18;
    const ceil = (a: bigint, b: bigint) => (a + b - 1n) / b;
    const charged =
      fee - ceil(BigInt(paid.gas_fee_usd18!), 10n ** 12n) + ceil(share * BigInt(mined[0].effective_gas_price) * pol, 10n ** 30n);
    expect(charged).not.toBe(fee); // Anvil's gas price moved between the quote and the sweep
    expect(await settlementFeeCharged(pool(), id)).toBe(charged);
    expect(await gasTankBalance(pool(), m.id)).toBe(5_000_000n - charged);
    expect(await balance(m)).toBe(formatAmount(5_000_000n - charged, 6, { fixed: true }));
    const events = await outbox(id);
    expect(events.map((e) => e.event)).toEqual(["payment.completed"]);
    expect(events[0]!.payload.feeDetails).toMatchObject({ usdtAmountUsed: usdt(charged), merchantType: "direct" });
  });

  it("Gas Tank empty -> awaiting_gas -> funded -> completed (no payment lost)", async () => {
    const m = await shop("Empty tank");
    const chain = chainOf(777177);
    const h = chainHelpers(chain);
    const to = payout();
    // Service chain: no gas fee, promotion waives the platform fee: the 0.10 USD processing fee remains.
    const id = await create(m, { merchant: to, chainId: "777177", token: h.token("USDC").address, amount: "3" });
    const p = await get(m, id);
    await h.pay("USDC", p.recipientAddress, parseUnits("3", 6));
    await until(m, id, "awaiting_gas");
    expect(await transitions(id)).toEqual(["paid", "awaiting_gas"]);
    // The merchant is subscribed to payment.awaiting_gas: the event is in the outbox with the top-up figures.
    const events = await outbox(id);
    expect(events.map((e) => e.event)).toEqual(["payment.awaiting_gas"]);
    expect(events[0]!.payload).toMatchObject({
      event: "payment.awaiting_gas",
      paymentId: id,
      status: "awaiting_gas",
      amount: "3",
      receivedAmount: "3",
      estimatedFeeUsdt: "0.1",
      gasTankBalance: "0",
      requiredTopUp: "0.1",
    });
    await fundGasTank(m, 777177, "1");
    await until(m, id, "completed");
    expect(await h.balanceOf("USDC", to)).toBe(parseUnits("3", 6));
    expect(await gasTankBalance(pool(), m.id)).toBe(900_000n);
    expect(await balance(m)).toBe("0.900000");
  });
});

describe("fee modes, exact to the smallest unit", () => {
  it("gasless with the USDT-like token: the merchant receives amount - fees, the fee recipient the fees", async () => {
    const m = await shop("Gasless");
    const chain = chainOf(777177);
    const h = chainHelpers(chain);
    const to = payout();
    const treasury = svc.deps.config.FEE_RECIPIENT as Address;
    const id = await create(m, { merchant: to, chainId: "777177", token: h.token("USDT").address, amount: "10", gasless: true });
    const p = await get(m, id);
    expect(p.fees).toEqual({ platformFee: "0", gasFee: "0", processingFee: "0.1", totalFee: "0.1", feePercentage: 0, agentFee: "0" });
    await h.pay("USDT", p.recipientAddress, parseUnits("10", 6));
    await until(m, id, "completed");
    expect(await h.balanceOf("USDT", to)).toBe(9_900_000n);
    // Other test files pay the same fee recipient at the same time: read this sweep's own event.
    const { sweep } = svc.deps.db.views;
    const rows = await svc.deps.db.orm
      .select({ fee: sweep.fee, feeRecipient: sweep.feeRecipient, amount: sweep.amount })
      .from(sweep)
      .where(eq(sweep.wallet, p.recipientAddress.toLowerCase() as Hex));
    expect(rows).toEqual([{ fee: 100000n, feeRecipient: treasury.toLowerCase(), amount: 9900000n }]);

    // An agent's share of such a fee is paid from the wallet the fees arrive in: on the local stack's own
    // configuration a withdrawal is paid without anyone funding a payout wallet by hand.
    const agent = await svc.newMerchant({ name: "Agent" });
    await createAgent(svc.deps.db, agent.id, { markupCapBps: 100, platformShareBps: 3000 });
    const agentTo = payout();
    expect((await svc.http("PATCH", "/v1/agent", { apiKey: agent.apiKey, body: { payoutAddress: agentTo } })).status).toBe(200);
    const usdtAddress = h.token("USDT").address;
    await pool().query(
      `INSERT INTO agent_earnings (agent_id, kind, payment_id, chain_id, currency, decimals, symbol, units) VALUES ($1, 'markup', $2, 777177, $3, 6, 'USDT', 30000)`,
      [agent.id, id, usdtAddress.toLowerCase()],
    );
    const w = await svc.http("POST", "/v1/agent/withdrawals", { apiKey: agent.apiKey, body: { chainId: "777177", token: usdtAddress } });
    expect(w.status, JSON.stringify(w.body)).toBe(201);
    await waitFor(async () => (await h.balanceOf("USDT", agentTo)) === 30_000n, { ...WAIT, what: "the agent's withdrawal on-chain" });
    const { rows: sent } = await pool().query(`SELECT signer, error FROM agent_withdrawals WHERE id = $1`, [w.body.withdrawalId]);
    expect(sent[0]).toEqual({ signer: treasury.toLowerCase(), error: null });
  });

  it("payer covers the fee: the payer sends amount + fees and the merchant receives exactly the amount", async () => {
    const m = await shop("Payer covers");
    const chain = chainOf(777177);
    const h = chainHelpers(chain);
    const to = payout();
    const id = await create(m, { merchant: to, chainId: "777177", token: h.token("USDC").address, amount: "7.25", payerCoversFee: true });
    const p = await get(m, id);
    expect((await row(id)).due_units).toBe("7350000");
    // Not enough: the amount without the fee. The detector records it (so it was seen) and leaves the payment pending.
    await h.pay("USDC", p.recipientAddress, parseUnits("7.25", 6));
    await waitFor(async () => (await row(id)).received_units === "7250000", { ...WAIT, what: "the underpayment recorded" });
    expect(await row(id)).toMatchObject({ status: "pending", received_units: "7250000", paid_at: null });
    expect(await get(m, id)).toMatchObject({ status: "pending", receivedAmount: "7.25" });
    expect(await transitions(id)).toEqual([]);
    await h.pay("USDC", p.recipientAddress, parseUnits("0.1", 6));
    await until(m, id, "completed");
    expect(await h.balanceOf("USDC", to)).toBe(7_250_000n);
  });

  it("direct merchant after the promotion pays the 1% platform fee (gasless)", async () => {
    const m = await shop("Promo used");
    const h = chainHelpers(chainOf(777177));
    // Its 30 free transactions, taken by 30 promotion payments completed through the state machine (history: their
    // addresses never receive funds, so each goes pending -> paid -> deploying_wallet -> completed in one transaction).
    const history: string[] = [];
    for (let i = 0; i < 30; i++)
      history.push(await create(m, { merchant: payout(), chainId: "777177", token: h.token("USDC").address, amount: "1", gasless: true }));
    for (const id of history) {
      expect((await row(id)).promo_applied).toBe(true);
      expect((await driveTo(svc.deps, id, "completed")).status).toBe("completed");
    }
    expect((await svc.http("GET", "/promo-status", { apiKey: m.apiKey })).body).toEqual({
      freeTransactions: { eligible: false, used: 30, remaining: 0 },
    });
    const to = payout();
    const id = await create(m, { merchant: to, chainId: "777177", token: h.token("USDC").address, amount: "123.456789", gasless: true });
    const p = await get(m, id);
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
    await until(m, id, "completed");
    expect(await h.balanceOf("USDC", to)).toBe(123_456_789n - 1_334_568n);
  });
});

describe("settlement failure", () => {
  it("gasless fees above the amount received -> failed (payment.failed), funds left for the merchant to withdraw", async () => {
    const m = await shop("Fees above amount");
    const h = chainHelpers(chainOf(777177));
    const token = getAddress(h.token("USDT").address);
    const to = payout();
    // 0.05 USDT gasless: the 0.10 USD processing fee alone exceeds it.
    const id = await create(m, { merchant: to, chainId: "777177", token, amount: "0.05", gasless: true });
    const p = await get(m, id);
    await h.pay("USDT", p.recipientAddress, parseUnits("0.05", 6));
    const failed = await until(m, id, "failed");
    expect(failed.receivedAmount).toBe("0.05");
    expect(await transitions(id)).toEqual(["paid", "failed"]);
    expect((await row(id)).failure_reason).toBe("fees exceed the amount received");
    // payment.failed, in the outbox for the subscribed merchant, with the reason.
    const events = await outbox(id);
    expect(events.map((e) => e.event)).toEqual(["payment.failed"]);
    expect(events[0]!.payload).toMatchObject({
      event: "payment.failed",
      paymentId: id,
      status: "failed",
      amount: "0.05",
      receivedAmount: "0.05",
      reason: "fees exceed the amount received",
    });
    // Nothing was swept: the funds are still on the deposit address, listed as the merchant's to recover ...
    expect(await h.balanceOf("USDT", p.recipientAddress)).toBe(50_000n);
    expect(await h.balanceOf("USDT", to)).toBe(0n);
    expect((await get(m, id)).unexpectedFunds).toEqual([
      { token, symbol: "USDT", decimals: 6, amount: "0.05", units: "50000", recoverable: true, recovery: null },
    ]);
    // ... and the merchant withdraws them to its payout address, in full: the fees a payment of 0.05 would pay
    // (0.0005 + 0.10) do not fit in the funds, so they come from the Gas Tank (docs/unexpected-funds.md, "Fees").
    const tankShort = await svc.http("POST", `/v1/payments/${id}/recover`, { apiKey: m.apiKey, body: { token } });
    expect(tankShort).toMatchObject({ status: 409, body: { success: false, error: "Gas Tank balance too low to pay for this recovery" } });
    await pool().query(`INSERT INTO ledger_entries (merchant_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', 200000, $2)`, [
      m.id,
      `test-credit:${id}`,
    ]);
    const r = await svc.http("POST", `/v1/payments/${id}/recover`, { apiKey: m.apiKey, body: { token } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      error: null,
      data: { paymentId: id, token, amount: "0.05", units: "50000", payout: to },
    });
    await waitFor(async () => (await h.balanceOf("USDT", to)) === 50_000n, { ...WAIT, what: "the funds recovered to the payout" });
    expect(await h.balanceOf("USDT", p.recipientAddress)).toBe(0n);
    expect(await gasTankBalance(pool(), m.id)).toBe(200_000n - 100_500n);
  });
});

describe("partial, over, expired, native", () => {
  it("partial payment stays pending past expiry, then the merchant withdraws it", async () => {
    const m = await shop("Partial");
    const h = chainHelpers(chainOf(777177));
    const to = payout();
    const id = await create(m, {
      merchant: to,
      chainId: "777177",
      token: h.token("USDC").address,
      amount: "50",
      expiresAt: svc.clock.now() + 60_000,
    });
    const p = await get(m, id);
    await h.pay("USDC", p.recipientAddress, parseUnits("20", 6));
    await waitFor(async () => (await row(id)).received_units === "20000000", { ...WAIT, what: "partial amount recorded" });
    svc.clock.advance(120_000);
    await svc.processors!.runOnce("expiry");
    expect((await get(m, id)).status).toBe("pending");
    const w = await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: m.apiKey });
    expect(w.status).toBe(200);
    expect(w.body).toEqual({ success: true, error: null, data: { paymentId: id, status: "withdraw_request", receivedAmount: "20" } });
    await until(m, id, "withdrawn");
    expect(await h.balanceOf("USDC", to)).toBe(20_000_000n);
    const r = await row(id);
    expect(r.withdrawn_units).toBe("20000000");
    expect(r.withdrawal_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    // Nothing left to withdraw now.
    expect(await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: m.apiKey })).toMatchObject({
      status: 409,
      body: { success: false, error: "Payment has no partial payment to withdraw", data: null },
    });
  });

  it("overpayment is recorded and settled to the merchant", async () => {
    const m = await shop("Overpaid");
    await fundGasTank(m, 777177, "1");
    const h = chainHelpers(chainOf(777177));
    const to = payout();
    const id = await create(m, { merchant: to, chainId: "777177", token: h.token("USDT").address, amount: "1" });
    const p = await get(m, id);
    await h.pay("USDT", p.recipientAddress, parseUnits("1.5", 6));
    expect((await until(m, id, "completed")).receivedAmount).toBe("1.5");
    expect((await row(id)).overpayment_units).toBe("500000");
    expect(await h.balanceOf("USDT", to)).toBe(1_500_000n);
  });

  it("expires when nothing was received", async () => {
    const m = await shop("Expiring");
    const h = chainHelpers(chainOf(777177));
    const id = await create(m, {
      merchant: payout(),
      chainId: "777177",
      token: h.token("USDT").address,
      amount: "1",
      expiresAt: svc.clock.now() + 5_000,
    });
    await svc.processors!.runOnce("expiry");
    expect((await get(m, id)).status).toBe("pending");
    svc.clock.advance(10_000);
    await svc.processors!.runOnce("expiry");
    expect((await get(m, id)).status).toBe("expired");
    expect(await transitions(id)).toEqual(["expired"]);
    expect((await outbox(id)).map((e) => e.event)).toEqual(["payment.expired"]);
  });

  it("native coin (MATIC on 137), priced by the oracle, watched by balance", async () => {
    const m = await shop("Native");
    const chain = chainOf(137);
    const h = chainHelpers(chain);
    await fundGasTank(m, 137, "2");
    const to = payout();
    const id = await create(m, {
      merchant: to,
      chainId: "137",
      token: "0x0000000000000000000000000000000000000000",
      amount: "3.000000000000000001",
    });
    const p = await get(m, id);
    expect(p.priceSource).toBe("trusted_oracle");
    expect(p.token).toEqual({ address: "0x0000000000000000000000000000000000000000", symbol: "MATIC", decimals: 18 });
    await h.sendNative(p.recipientAddress, parseEther("3.000000000000000001"));
    await until(m, id, "completed");
    expect(await h.pub.getBalance({ address: to })).toBe(parseEther("3.000000000000000001"));
  });
});
