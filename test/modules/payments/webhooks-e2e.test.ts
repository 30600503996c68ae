import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseUnits, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { indexerProgress } from "../../../db/indexer-status.js";
import { detectPayments, type PaymentRow } from "../../../modules/payments/index.js";
import { PAYMENT_EVENTS } from "../../../modules/webhooks/index.js";
import { allProcessors } from "../../../processors/index.js";
import { startProcessors, type ProcessorRunner } from "../../../processors/runner.js";
import { webhookDispatcher, type WebhookDispatcherProcessor } from "../../../processors/webhook-dispatcher.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { startReceiver, type Received, type Receiver } from "../webhooks/helpers/receiver.js";

// Payment state changes reach the merchant as signed webhooks, end to end on the real stack: payments
// created over HTTP, paid on Anvil, indexed by Ponder, settled by the factory, and the events POSTed by
// the dispatcher to a real HTTPS receiver (self-signed certificate) exactly as the spec's "Events ->
// Payment webhooks" describes them.
//
// The service runs every processor of allProcessors() except its default webhook dispatcher, which
// cannot trust the receiver's certificate (it would claim the deliveries and fail them with a TLS
// error, i.e. retry in 5 minutes): a dispatcher given the receiver's CA takes its place.

vi.setConfig({ testTimeout: 180_000 });
// Generous: on a loaded 2-core machine (several test runs at once) Ponder can take tens of seconds to index.
const WAIT = 120_000;
const CHAIN = 777177;

let receiver: Receiver;
let svc: TestService;
let dispatcher: WebhookDispatcherProcessor;
let runner: ProcessorRunner;
const processorErrors: string[] = [];
/** Merchant A: subscribed to all five events. Its Gas Tank is never funded. */
let shopA: { id: string; apiKey: string; secret: string; path: string };
/** Merchant B: subscribed to the default events only. */
let shopB: { id: string; apiKey: string; secret: string; path: string };
/** Every (receiver path, paymentId, event) a test expects; the last test checks nothing else arrived. */
const expected: { path: string; paymentId: string; event: string }[] = [];
const startedAt = Date.now();

beforeAll(async () => {
  receiver = await startReceiver();
  svc = await startTestService({ processors: false });
  dispatcher = webhookDispatcher({ tls: { ca: receiver.ca }, log: (m) => void processorErrors.push(m) });
  const processors = allProcessors().map((p) => (p.name === dispatcher.name ? dispatcher : p));
  runner = startProcessors(svc.deps, processors, (m) => {
    processorErrors.push(m);
    if (process.env.DEBUG_PROCESSORS) console.error(m);
  });
  shopA = await shopWithWebhook("A", "/hooks/a", { events: [...PAYMENT_EVENTS] });
  shopB = await shopWithWebhook("B", "/hooks/b", {});
});
afterAll(async () => {
  await runner?.stop();
  await dispatcher?.close();
  await svc?.stop();
  await receiver?.close();
});

async function shopWithWebhook(name: string, path: string, body: Record<string, unknown>) {
  const m = await svc.newMerchant({ name: `Webhook shop ${name}` });
  const url = new URL(receiver.url);
  url.pathname = path;
  const res = await svc.http("PUT", "/v1/webhooks", { apiKey: m.apiKey, body: { url: url.toString(), ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.data.secret).toMatch(/^whsec_/);
  return { ...m, secret: res.body.data.secret as string, path };
}

const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");

async function create(apiKey: string, body: Record<string, unknown>): Promise<string> {
  const res = await svc.http("POST", "/payments", { apiKey, body: { orderId: `order-${Math.random()}`, chainId: String(CHAIN), ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.url as string).split("/pay/")[1]!;
}
async function get(paymentId: string, apiKey: string) {
  const { rows } = await svc.deps.db.pool.query(`SELECT order_id FROM payments WHERE id = $1`, [paymentId]);
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(rows[0].order_id)}`, { apiKey });
  return res.body.data[0];
}
async function row(paymentId: string) {
  return (await svc.deps.db.pool.query(`SELECT * FROM payments WHERE id = $1`, [paymentId])).rows[0];
}
/** The block Ponder has indexed on the test chain. */
async function indexedBlock(): Promise<bigint> {
  const p = (await indexerProgress(svc.deps.db))?.find((x) => x.chainId === CHAIN);
  return BigInt(p?.indexedBlock ?? 0);
}
/**
 * Polls a payment paid at block `transferBlock` until it is counted: each sample reads the status, then the
 * indexed block. While the transfer is seen but not 2 deep the payment is `waiting_for_confirmation` (or still
 * `pending`, before the detector's pass). Fails if any other status is ever seen while the indexer was still below
 * `transferBlock + 1` (2 confirmations); returns the indexed block read right after the first such status.
 */
async function watchConfirmations(paymentId: string, transferBlock: bigint): Promise<bigint> {
  return waitFor(
    async () => {
      const status = (await row(paymentId)).status;
      const indexed = await indexedBlock();
      if (status === "pending" || status === "waiting_for_confirmation") return null;
      if (indexed < transferBlock + 1n)
        throw new Error(`${paymentId} was ${status} with block ${indexed} indexed (transfer in ${transferBlock})`);
      return indexed;
    },
    { timeout: WAIT, interval: 50, what: `${paymentId} to be counted` },
  );
}
let expiryQueue: Promise<unknown> = Promise.resolve();
/**
 * Creates a payment and lets it expire (clock moved past its expiresAt, one expiry pass). One at a
 * time: a clock moved by a concurrent test between choosing expiresAt and creating the payment would
 * make that expiresAt lie in the past (400). The clock moves 10 s per call: webhook-timestamp stays
 * well inside the receivers' 5-minute tolerance.
 */
function createExpired(apiKey: string, body: Record<string, unknown>): Promise<string> {
  const run = expiryQueue.then(async () => {
    const id = await create(apiKey, { ...body, expiresAt: svc.clock.now() + 5_000 });
    svc.clock.advance(10_000);
    await runner.runOnce("expiry");
    return id;
  });
  expiryQueue = run.catch(() => {});
  return run;
}
/** The time of the transition that caused the event (the payload's `timestamp` is the same instant). */
async function transitionAt(paymentId: string, toStatus: string): Promise<number> {
  const { rows } = await svc.deps.db.pool.query(`SELECT created_at FROM payment_events WHERE payment_id = $1 AND to_status = $2`, [
    paymentId,
    toStatus,
  ]);
  expect(rows).toHaveLength(1);
  return (rows[0].created_at as Date).getTime();
}

type Hook = { req: Received; body: Record<string, any> };
const parsed = (r: Received): Hook => ({ req: r, body: JSON.parse(r.rawBody) });
const hooksFor = (path: string, paymentId: string, event?: string) =>
  receiver.received
    .filter((r) => r.path === path)
    .map(parsed)
    .filter((h) => h.body.paymentId === paymentId && (!event || h.body.event === event));

/** Waits for the webhook of this event to arrive at `shop`'s URL and checks what every payment webhook must hold. */
async function webhook(shop: typeof shopA, paymentId: string, event: string): Promise<Hook> {
  expected.push({ path: shop.path, paymentId, event });
  const hook = await waitFor(async () => hooksFor(shop.path, paymentId, event)[0], {
    timeout: WAIT,
    interval: 200,
    what: `${event} of ${paymentId} at ${shop.path}`,
  });
  const { req, body } = hook;
  // Signature: lowercase hex SHA-256 of (raw body + the webhook secret), over the bytes received.
  expect(req.headers["x-signature"]).toMatch(/^[0-9a-f]{64}$/);
  expect(req.headers["x-signature"]).toBe(sha256hex(req.rawBody + shop.secret));
  expect(req.headers["x-signature"]).not.toBe(sha256hex(req.rawBody + (shop === shopA ? shopB : shopA).secret));
  expect(new Webhook(shop.secret).verify(req.rawBody, req.headers)).toEqual(body);
  expect(req.headers["content-type"]).toBe("application/json");
  expect(req.headers["webhook-id"]).toBeTruthy();

  // Common fields, with the spec's types.
  const p = await row(paymentId);
  const status = event.slice("payment.".length);
  expect(body).toMatchObject({
    event,
    paymentId,
    orderId: p.order_id,
    merchant: p.merchant_address,
    recipientAddress: p.recipient_address,
    token: p.token_address,
    chainId: CHAIN,
    status,
  });
  expect(typeof body.amount).toBe("string");
  expect(body.amount).toMatch(/^\d+(\.\d+)?$/);
  expect(typeof body.chainId).toBe("number");
  expect(body.token).toMatch(/^0x[0-9a-fA-F]{40}$/);
  expect(body.merchant).toMatch(/^0x[0-9a-fA-F]{40}$/);
  expect(body.recipientAddress).toMatch(/^0x[0-9a-fA-F]{40}$/);
  expect(typeof body.timestamp).toBe("number");
  expect(Number.isInteger(body.timestamp)).toBe(true);
  expect(body.timestamp).toBe(await transitionAt(paymentId, status)); // Unix ms of the state change
  expect(body.timestamp).toBeGreaterThanOrEqual(startedAt);
  expect(body.timestamp).toBeLessThanOrEqual(svc.clock.now());
  expect(body).toHaveProperty("terminal", null);
  return hook;
}

describe("payment webhooks, end to end", () => {
  it.concurrent("(1) gasless USDT, overpaid, 2 confirmations -> payment.completed with every field", async () => {
    const h = chainHelpers(chain());
    const to = payout();
    const id = await create(shopA.apiKey, {
      merchant: to,
      token: h.token("USDT").address,
      amount: "10",
      gasless: true,
      description: "Two espressos",
      blockConfirmations: 2,
    });
    const p = await get(id, shopA.apiKey);
    expect(p.status).toBe("pending");
    const transfer = await h.pay("USDT", p.recipientAddress, parseUnits("10.5", 6));
    // The service waits for the 2nd confirmation: confirmations count against the block the indexer has indexed
    // (processors/detector.ts; detect.ts counts a transfer at block B once latest - 2 + 1 >= B), so the
    // payment may be paid only once block B + 1 is indexed (before, `waiting_for_confirmation`). Sampled while it
    // waits: status first, then the indexer's block, so a later status seen with the indexer still at B would
    // prove it paid too early.
    // (The deterministic form of this check, with the indexed block chosen by the test, is test (1b).)
    expect(await watchConfirmations(id, transfer.blockNumber)).toBeGreaterThanOrEqual(transfer.blockNumber + 1n);
    const paid = await row(id);
    expect(paid.payment_block_number).toBe(transfer.blockNumber.toString());
    expect(paid.payment_tx_hash).toBe(transfer.transactionHash);

    const { body } = await webhook(shopA, id, "payment.completed");
    const r = await row(id);
    expect(r.settlement_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    // The settlement (sweep) transaction, mined on the chain by the factory.
    expect(body.transactionHash).toBe(r.settlement_tx_hash);
    expect((await get(id, shopA.apiKey)).settlementTransactionHash).toBe(body.transactionHash);
    const receipt = await h.pub.getTransactionReceipt({ hash: body.transactionHash as Hex });
    expect(receipt.status).toBe("success");
    expect(receipt.to?.toLowerCase()).toBe(chain().factory!.toLowerCase());
    expect(body).toMatchObject({
      amount: "10",
      token: h.token("USDT").address,
      merchant: to,
      recipientAddress: p.recipientAddress,
      status: "completed",
      description: "Two espressos",
      blockConfirmations: 2,
      receivedAmount: "10.5",
      overpayment: "0.5",
      terminal: null,
    });
    expect(typeof body.blockConfirmations).toBe("number");
    // feeDetails: {gasUsed: number, gasPrice: string, usdtAmountUsed: string, merchantType: string}, then the list's `fees`.
    expect(Object.keys(body.feeDetails).sort()).toEqual(
      [
        "agentFee",
        "feePercentage",
        "gasFee",
        "gasPrice",
        "gasUsed",
        "merchantType",
        "platformFee",
        "processingFee",
        "totalFee",
        "usdtAmountUsed",
      ].sort(),
    );
    const { gasUsed, gasPrice, usdtAmountUsed, merchantType } = body.feeDetails;
    expect(typeof gasUsed).toBe("number");
    expect(Number.isInteger(gasUsed) && gasUsed > 0).toBe(true);
    expect(gasUsed).toBeLessThanOrEqual(Number(receipt.gasUsed));
    expect(typeof gasPrice).toBe("string");
    expect(gasPrice).toBe(receipt.effectiveGasPrice.toString());
    expect(typeof usdtAmountUsed).toBe("string");
    expect(usdtAmountUsed).toMatch(/^\d+(\.\d+)?$/);
    expect(merchantType).toBe("direct");
    // Not a withdrawal.
    expect(body).not.toHaveProperty("amountWithdrawn");
    expect(body).not.toHaveProperty("withdrawalTransactionHash");
  });

  it.concurrent.each([2, 5])("(1b) %i confirmations: a transfer not yet that deep is not counted; at that depth it pays", async (depth) => {
    // Detection driven by hand at a chosen indexed block, in a service of its own without processors (so no
    // detector of its own runs ahead of the test): the same code the detector runs (detect.ts detectPayments).
    const quiet = await startTestService({ processors: false });
    try {
      const m = await quiet.newMerchant({ name: "Confirmations" });
      const h = chainHelpers(chain());
      const res = await quiet.http("POST", "/payments", {
        apiKey: m.apiKey,
        body: {
          orderId: `order-${Math.random()}`,
          chainId: String(CHAIN),
          merchant: payout(),
          token: h.token("USDT").address,
          amount: "10",
          gasless: true,
          blockConfirmations: depth,
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const id = (res.body.url as string).split("/pay/")[1]!;
      const state = async () => {
        const { rows } = await quiet.deps.db.pool.query<Pick<PaymentRow, "status" | "received_units">>(
          `SELECT status, received_units FROM payments WHERE id = $1`,
          [id],
        );
        return rows[0];
      };
      const { rows } = await quiet.deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [id]);
      const transfer = await h.pay("USDT", rows[0]!.recipient_address as Address, parseUnits("10", 6));
      const B = transfer.blockNumber;
      // The transfer is indexed (the detector counts only indexed transfers).
      const t = quiet.deps.db.views.transfer;
      await waitFor(
        async () => (await quiet.deps.db.orm.select({ id: t.id }).from(t).where(eq(t.transactionHash, transfer.transactionHash))).length,
        { timeout: WAIT, what: "the transfer indexed" },
      );
      const c = quiet.deps.chains.find((x) => x.chainId === CHAIN)!;
      // The blocks whose balances the detector reads exist on the chain (1 s blocks).
      await waitFor(async () => (await h.pub.getBlockNumber()) >= B + BigInt(depth - 1), { timeout: WAIT, what: `block B + ${depth - 1}` });
      // Indexed up to B + k: k + 1 confirmations. Short of `depth`, not counted at all, not even as a partial amount:
      // the full amount is seen, so the payment waits for its confirmations (`receivedAmount` is what counts: 0).
      for (let k = 0n; k < BigInt(depth - 1); k++) {
        await detectPayments(quiet.deps, c, B + k);
        expect(await state(), `${k + 1n} of ${depth} confirmations`).toEqual({ status: "waiting_for_confirmation", received_units: "0" });
      }
      // At `depth` confirmations: paid in full.
      await detectPayments(quiet.deps, c, B + BigInt(depth - 1));
      expect(await state()).toEqual({ status: "paid", received_units: "10000000" });
    } finally {
      await quiet.stop();
    }
  });

  it.concurrent("(2) partial payment withdrawn -> payment.withdrawn with amountWithdrawn and withdrawalTransactionHash", async () => {
    const h = chainHelpers(chain());
    const to = payout();
    const id = await create(shopA.apiKey, { merchant: to, token: h.token("USDC").address, amount: "50" });
    const p = await get(id, shopA.apiKey);
    await h.pay("USDC", p.recipientAddress, parseUnits("20", 6));
    await waitFor(async () => (await get(id, shopA.apiKey)).receivedAmount === "20", { timeout: WAIT, what: "partial amount recorded" });
    const w = await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: shopA.apiKey });
    expect(w.status, JSON.stringify(w.body)).toBe(200);

    const { body } = await webhook(shopA, id, "payment.withdrawn");
    const r = await row(id);
    expect(r.withdrawal_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(body).toMatchObject({
      status: "withdrawn",
      amount: "50",
      merchant: to,
      receivedAmount: "20",
      amountWithdrawn: "20",
      withdrawalTransactionHash: r.withdrawal_tx_hash,
      terminal: null,
    });
    expect(typeof body.amountWithdrawn).toBe("string");
    const receipt = await h.pub.getTransactionReceipt({ hash: body.withdrawalTransactionHash as Hex });
    expect(receipt.status).toBe("success");
    expect(await h.balanceOf("USDC", to as Address)).toBe(20_000_000n);
    // Not a completion, not overpaid, no description, default confirmations.
    for (const k of ["transactionHash", "feeDetails", "overpayment", "description", "blockConfirmations"])
      expect(body).not.toHaveProperty(k);
  });

  it.concurrent("(3) a merchant with an empty Gas Tank -> payment.awaiting_gas with the top-up figures", async () => {
    expect((await svc.http("GET", "/balance", { apiKey: shopA.apiKey })).body.balance).toBe("0.000000");
    const h = chainHelpers(chain());
    const id = await create(shopA.apiKey, { merchant: payout(), token: h.token("USDC").address, amount: "3" });
    const p = await get(id, shopA.apiKey);
    await h.pay("USDC", p.recipientAddress, parseUnits("3", 6));

    const { body } = await webhook(shopA, id, "payment.awaiting_gas");
    expect(body).toMatchObject({ status: "awaiting_gas", amount: "3", receivedAmount: "3", terminal: null });
    for (const k of ["estimatedFeeUsdt", "gasTankBalance", "requiredTopUp"]) {
      expect(typeof body[k], k).toBe("string");
      expect(body[k], k).toMatch(/^\d+(\.\d+)?$/);
    }
    // Service chain, promotion: only the 0.10 USD processing fee; nothing in the tank.
    expect(body).toMatchObject({ estimatedFeeUsdt: "0.1", gasTankBalance: "0", requiredTopUp: "0.1" });
    expect(body).not.toHaveProperty("transactionHash");
    expect(body).not.toHaveProperty("feeDetails");
  });

  it.concurrent("(4) an expired payment -> payment.expired", async () => {
    const h = chainHelpers(chain());
    const id = await createExpired(shopA.apiKey, { merchant: payout(), token: h.token("USDT").address, amount: "1" });
    expect((await get(id, shopA.apiKey)).status).toBe("expired");

    const { body } = await webhook(shopA, id, "payment.expired");
    expect(body).toMatchObject({ status: "expired", amount: "1", token: h.token("USDT").address, terminal: null });
    for (const k of ["transactionHash", "feeDetails", "overpayment", "receivedAmount", "amountWithdrawn"])
      expect(body).not.toHaveProperty(k);
  });

  it.concurrent("(6) a gasless payment smaller than its fees -> payment.failed, funds left at the address", async () => {
    const h = chainHelpers(chain());
    const id = await create(shopA.apiKey, { merchant: payout(), token: h.token("USDT").address, amount: "0.05", gasless: true });
    const p = await get(id, shopA.apiKey);
    await h.pay("USDT", p.recipientAddress, 50_000n);

    const { body } = await webhook(shopA, id, "payment.failed");
    expect(body).toMatchObject({ status: "failed", amount: "0.05", receivedAmount: "0.05", reason: "fees exceed the amount received" });
    for (const k of ["transactionHash", "feeDetails"]) expect(body).not.toHaveProperty(k);
    expect((await row(id)).status).toBe("failed");
    // Nothing was swept: the payer's 0.05 is still at the payment's address.
    expect(await h.balanceOf("USDT", p.recipientAddress)).toBe(50_000n);
  });

  it.concurrent("(5) a merchant on the default events gets payment.completed but not payment.expired", async () => {
    const cfg = await svc.http("GET", "/v1/webhooks", { apiKey: shopB.apiKey });
    expect(cfg.body.data.events).toEqual(["payment.completed", "payment.withdrawn"]);
    const h = chainHelpers(chain());
    const to = payout();
    const paid = await create(shopB.apiKey, { merchant: to, token: h.token("USDT").address, amount: "2", gasless: true });
    const p = await get(paid, shopB.apiKey);
    await h.pay("USDT", p.recipientAddress, parseUnits("2", 6));
    const expiring = await createExpired(shopB.apiKey, { merchant: payout(), token: h.token("USDT").address, amount: "1" });
    expect((await get(expiring, shopB.apiKey)).status).toBe("expired");
    // Not subscribed: no outbox row at all.
    const { rows } = await svc.deps.db.pool.query(`SELECT event FROM webhook_deliveries WHERE payment_id = $1`, [expiring]);
    expect(rows).toEqual([]);

    const { body } = await webhook(shopB, paid, "payment.completed");
    expect(body).toMatchObject({ status: "completed", amount: "2", receivedAmount: "2", merchant: to, terminal: null });
    expect(body.transactionHash).toBe((await row(paid)).settlement_tx_hash);
    expect(body.feeDetails).toMatchObject({ merchantType: "direct" });
    // Default confirmations, exact amount, no description: those optional fields are absent.
    for (const k of ["blockConfirmations", "overpayment", "description"]) expect(body).not.toHaveProperty(k);
    // The expired event went nowhere, even after one more dispatcher pass: B's URL got exactly the completion
    // (B pays only in this test), and no URL got anything about the expired payment.
    await runner.runOnce("webhook-dispatcher");
    const received = receiver.received.map(parsed);
    const atB = received.filter((h) => h.req.path === shopB.path).map((h) => `${h.body.paymentId} ${h.body.event}`);
    expect(atB).toEqual([`${paid} payment.completed`]);
    expect(received.filter((h) => h.body.paymentId === expiring).map((h) => `${h.req.path} ${h.body.event}`)).toEqual([]);
  });

  it("delivers each event exactly once per webhook-id, and nothing else", async () => {
    // An event of this test's own, so the comparisons below are never of two empty lists (this test run alone).
    const h = chainHelpers(chain());
    const own = await createExpired(shopA.apiKey, { merchant: payout(), token: h.token("USDC").address, amount: "4" });
    await webhook(shopA, own, "payment.expired");
    expect(expected.length).toBeGreaterThan(0);
    // One more pass: anything still due (a duplicate, an unexpected event) would arrive now.
    await runner.runOnce("webhook-dispatcher");
    const byId = new Map<string, Received[]>();
    for (const r of receiver.received) byId.set(r.headers["webhook-id"]!, [...(byId.get(r.headers["webhook-id"]!) ?? []), r]);
    // Each webhook-id arrived once (a retry of it would carry the same id and the same bytes).
    for (const [id, reqs] of byId) {
      expect(reqs.length, `deliveries of webhook-id ${id}`).toBe(1);
      expect(new Set(reqs.map((r) => r.rawBody)).size).toBe(1);
    }
    // After deduplication by webhook-id: exactly the expected events, one webhook-id each.
    const events = [...byId.values()].map(([r]) => {
      const b = JSON.parse(r!.rawBody);
      return `${r!.path} ${b.paymentId} ${b.event}`;
    });
    expect(events).toContain(`${shopA.path} ${own} payment.expired`);
    expect(events.sort()).toEqual(expected.map((e) => `${e.path} ${e.paymentId} ${e.event}`).sort());
    // The outbox agrees: one delivery per event, delivered on the first attempt, its id the webhook-id.
    const { rows } = await svc.deps.db.pool.query(
      `SELECT id, status, attempts, event, payment_id FROM webhook_deliveries WHERE merchant_id = ANY($1::uuid[])`,
      [[shopA.id, shopB.id]],
    );
    expect(rows).toHaveLength(expected.length);
    expect(rows.map((d) => d.id).sort()).toEqual([...byId.keys()].sort());
    for (const d of rows) expect(d, `${d.event} ${d.payment_id}`).toMatchObject({ status: "success", attempts: 1 });
    expect(processorErrors.filter((m) => /webhook/.test(m))).toEqual([]);
  });
});
