import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { encodeFunctionData, parseUnits, zeroAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testTokenAbi } from "../../../abis/TestToken.js";
import { BridgeOrders, BridgeQuote } from "../../../api/openapi/schemas-bridge.js";
import { Payment } from "../../../api/openapi/schemas-payments.js";
import { DomainError } from "../../../core/errors.js";
import { formatAmount } from "../../../core/money.js";
import {
  bridgeOrderInFlight,
  EXPIRY_EXTENSION_MS,
  startBridgePayment,
  applyCancelOutcome,
  AUTO_CANCEL_MS,
  CANCEL_RETRY_MS,
  MAX_CANCEL_REVERTS,
  statusBudget,
} from "../../../modules/bridge/index.js";
import { runBridgeOrders } from "../../../flows/bridge-orders.js";
import { expirePayments, paymentWebhookPayload, refreshedPaymentWebhookBody, type PaymentRow } from "../../../modules/payments/index.js";
import { detector } from "../../../processors/detector.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import type { DlnFake } from "./dln-fake.js";
import { deBridgeGateAbi, dlnDestinationAbi } from "../../../modules/bridge/index.js";
import { DLN_EVM } from "../../../chains/registry.js";
import { readDeployments } from "../../../chains/runtime.js";
import { bridgeScene, DST, EXECUTION_FEE, MESSAGING_FEE } from "./scene.js";

// The payment side of cross-chain payments (modules/bridge/orders.ts, poll.ts) on the real stack (Postgres, Anvil
// 777177 as the destination, the service's API and tx-sender), with a scripted DLN server as the provider: quotes
// for exactly what the payment still needs, the payer's transaction reported (15 more minutes, once), the expiry job
// holding payments with an order in flight, and the 5-minute auto-cancel sent on chain by the order authority.

vi.setConfig({ testTimeout: 120_000 });
const scene = bridgeScene("Bridge shop");
const { h, usdc137, usdt, newPayment, row, order, events, quote, report, randomHash, placeOrder, withDestination } = scene;
let fake: DlnFake;
let svc: TestService;
let shop: { id: string; apiKey: string };
let authority: Address;
beforeAll(() => {
  ({ fake, svc, shop } = scene.get());
  authority = privateKeyToAccount(svc.deps.config.SETTLER_PRIVATE_KEY as Hex).address;
});

async function errorOf(p: Promise<unknown>): Promise<DomainError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(DomainError);
  return e as DomainError;
}

describe("GET /payments/{id}/bridge/quote", () => {
  it("without payer: an estimation for exactly what is due; nothing recorded", async () => {
    const id = await newPayment({ amount: "12.345678" });
    const r = await quote(id, `srcChainId=137&srcToken=${usdc137()}`);
    expect(r.status).toBe(200);
    // 12.345678 USDT * 1.003 rounded up + 0.005 operating expenses (the scripted provider's price).
    expect(r.body).toEqual({
      paymentId: id,
      orderId: null,
      srcChainId: 137,
      srcToken: { address: usdc137(), symbol: "USDC", decimals: 6, amount: "12.387716", units: "12387716", operatingExpenseUnits: "5000" },
      dstChainId: DST,
      dstToken: { address: usdt(), symbol: "USDT", decimals: 6, amount: "12.345678", units: "12345678" },
      refund: { address: usdc137(), symbol: "USDC", decimals: 6, amount: "12.387716", units: "12387716" },
      preSwap: false,
      fixFee: "1000",
      estimatedFulfillmentSeconds: 3,
      tx: null,
      expiresAt: (await row(id)).expires_at.getTime(),
      quoteAgeMs: expect.any(Number),
    });
    expect((await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM bridge_orders WHERE payment_id = $1`, [id])).rows[0].n).toBe(0);
  });

  it("with payer, after a partial payment: the order for the rest, to the payment's recipient, cancellable by the service only", async () => {
    const id = await newPayment({ amount: "10" });
    const p = await row(id);
    await h().pay("USDT", p.recipient_address as Address, parseUnits("3.25", 6));
    const detect = detector();
    await waitFor(async () => (await detect.run(svc.deps), (await row(id)).received_units === "3250000"), {
      what: "partial payment detected",
    });

    const payer = privateKeyToAccount(generatePrivateKey()).address;
    fake.requests.length = 0;
    const r = await quote(id, `srcChainId=137&srcToken=${usdc137().toLowerCase()}&payer=${payer.toLowerCase()}`);
    expect(r.status).toBe(200);
    const sent = fake.requests[0]!.params;
    expect(Object.fromEntries(sent)).toEqual({
      srcChainId: "137",
      srcChainTokenIn: usdc137().toLowerCase(),
      srcChainTokenInAmount: "auto",
      dstChainId: String(DST),
      dstChainTokenOut: usdt(),
      dstChainTokenOutAmount: "6750000",
      dstChainTokenOutRecipient: p.recipient_address,
      senderAddress: payer,
      srcChainOrderAuthorityAddress: payer,
      dstChainOrderAuthorityAddress: authority,
      srcChainRefundAddress: payer,
      prependOperatingExpenses: "true",
    });
    expect(r.body.dstToken).toEqual({ address: usdt(), symbol: "USDT", decimals: 6, amount: "6.75", units: "6750000" });
    expect(r.body.srcToken.units).toBe("6775250"); // 6750000 * 1.003 + 5000
    expect(r.body.tx).toEqual({
      kind: "evm",
      to: `0x${"ab".repeat(20)}`,
      data: "0xb9303701",
      value: "1000",
      allowanceTarget: `0x${"ab".repeat(20)}`,
      allowanceValue: "6775250",
    });
    expect(BridgeQuote.safeParse(r.body).error).toBeUndefined(); // the documented answer (api/openapi)
    expect(await order(r.body.orderId)).toMatchObject({
      payment_id: id,
      status: "quoted",
      src_chain_id: 137,
      src_token: usdc137(),
      src_amount: "6775250",
      payer,
      dst_chain_id: DST,
      dst_token: usdt(),
      take_amount: "6750000",
      reported_at: null,
    });
  });

  it("refuses with the documented messages", async () => {
    const id = await newPayment({ expiresInMs: 60_000 });
    const ok = `srcChainId=137&srcToken=${usdc137()}`;
    const cases: [string, string, number, string][] = [
      [id, "", 400, "srcChainId and srcToken are required"],
      [id, `srcChainId=137`, 400, "srcChainId and srcToken are required"],
      [id, `srcChainId=0x89&srcToken=${usdc137()}`, 400, "srcChainId must be a number"],
      [id, `srcChainId=137&srcToken=0x12`, 400, "Invalid source token address"],
      [id, `${ok}&payer=nobody`, 400, "Invalid payer address"],
      [id, `srcChainId=${DST}&srcToken=${usdc137()}`, 400, "Source and destination networks must differ"],
      ["not-a-uuid", ok, 404, "Payment not found"],
      ["3d3f1c9a-8f4e-4a57-b9f1-0d6c4b1e2a10", ok, 404, "Payment not found"],
    ];
    for (const [pid, q, status, error] of cases) {
      const r = await quote(pid, q);
      expect([r.status, r.body], `${pid} ?${q}`).toEqual([status, { error }]);
    }
    fake.override("/v1.0/dln/order/create-tx", 400, { errorCode: 2, errorId: "UNSUPPORTED_TOKEN_IN", errorMessage: "x" });
    expect((await quote(id, ok)).body).toEqual({ error: "Token not supported by the bridge" });
    fake.override("/v1.0/dln/order/create-tx", 500, "oops");
    expect(await quote(id, ok)).toMatchObject({ status: 503, body: { error: "Bridge unavailable" } });

    svc.clock.advance(60_001);
    expect(await quote(id, ok)).toMatchObject({ status: 409, body: { error: "Payment has expired" } });
    await expirePayments(svc.deps);
    expect(await quote(id, ok)).toMatchObject({ status: 409, body: { error: "Payment is not awaiting payment" } });

    const off = { ...svc.deps, config: { ...svc.deps.config, BRIDGE_API_URL: undefined } };
    const e = await errorOf(
      startBridgePayment(off, await newPayment(), { srcChainId: 137, srcToken: usdc137() }, async () => ({
        allowed: true,
        retryAfterSeconds: 0,
      })),
    );
    expect([e.kind, e.message]).toEqual(["unavailable", "Cross-chain payments are not available"]);
  });
});

describe("POST /payments/{id}/bridge/orders", () => {
  it("the payer's order becomes created and the payment's expiresAt moves exactly 15 minutes, once", async () => {
    const id = await newPayment();
    const before = (await row(id)).expires_at.getTime();
    const { orderId, txHash, report: body } = await placeOrder(id);
    expect(EXPIRY_EXTENSION_MS).toBe(900_000);
    expect((await row(id)).expires_at.getTime()).toBe(before + 900_000);
    expect(body).toMatchObject({ paymentId: id, expiresAt: before + 900_000 });
    expect(body.orders).toHaveLength(1);
    expect(body.orders[0]).toMatchObject({ orderId, status: "created", providerStatus: "Created", createTxHash: txHash, srcChainId: 137 });
    expect(body.orders[0].reportedAt).toBe((await order(orderId)).reported_at.getTime());

    // Reported again (the page retries): nothing moves.
    const again = await report(id, txHash);
    expect(again.status).toBe(200);
    expect(again.body.expiresAt).toBe(before + 900_000);
    expect((await row(id)).expires_at.getTime()).toBe(before + 900_000);
    expect(await events(orderId)).toEqual([{ from_status: "quoted", to_status: "created", reason: "payer's order Created" }]);

    // What the payer page polls, and what the merchant sees (list output and webhooks).
    expect((await svc.http("GET", `/payments/${id}/bridge/orders`)).body).toEqual(again.body);
    const ref = { orderId, srcChainId: 137, srcToken: usdc137(), status: "created" };
    const list = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent((await row(id)).order_id)}`, { apiKey: shop.apiKey });
    expect(list.body.data[0].bridge).toEqual(ref);
    expect(Payment.safeParse(list.body.data[0]).error).toBeUndefined();
    expect(BridgeOrders.safeParse(again.body).error).toBeUndefined();
    expect((await paymentWebhookPayload(svc.deps.db.pool, await row(id), "payment.expired", svc.clock.now())).bridge).toEqual(ref);
    const other = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent((await row(await newPayment())).order_id)}`, {
      apiKey: shop.apiKey,
    });
    expect(other.body.data[0].bridge).toBeNull();

    // A webhook written now carries `created`; before its first attempt the dispatcher brings the block up to date.
    const pool = svc.deps.db.pool;
    const written = JSON.stringify(await paymentWebhookPayload(pool, await row(id), "payment.completed", svc.clock.now()));
    const delivery = { kind: "payment", event: "payment.completed", body: written };
    expect(await refreshedPaymentWebhookBody(pool, delivery)).toBeNull(); // nothing moved yet
    fake.setStatus(orderId, "Fulfilled");
    await runBridgeOrders(svc.deps);
    expect((await order(orderId)).status).toBe("fulfilled");
    const fresh = JSON.parse((await refreshedPaymentWebhookBody(pool, delivery))!);
    expect(fresh).toEqual({ ...JSON.parse(written), bridge: { ...ref, status: "fulfilled" } });
    expect(await refreshedPaymentWebhookBody(pool, { ...delivery, body: JSON.stringify({ ...fresh, bridge: null }) })).toBeNull();
  });

  it("refuses: not indexed yet (409), another payment's order, a bad hash, no body, an unknown payment", async () => {
    const a = await newPayment();
    const b = await newPayment();
    const { txHash } = await placeOrder(a);
    expect(await report(b, randomHash())).toEqual(
      expect.objectContaining({ status: 409, body: { error: "No bridge order found in this transaction yet" } }),
    );
    expect(await report(b, txHash)).toEqual(
      expect.objectContaining({ status: 400, body: { error: "Transaction created no bridge order for this payment" } }),
    );
    expect((await report(b, "0x1234")).body).toEqual({ error: "Invalid transaction hash" });
    expect((await svc.http("POST", `/payments/${b}/bridge/orders`, { body: {} })).body).toEqual({ error: "txHash is required" });
    expect((await svc.http("POST", `/payments/${b}/bridge/orders`, { body: "[1]" })).body).toEqual({ error: "txHash is required" });
    expect(await report("3d3f1c9a-8f4e-4a57-b9f1-0d6c4b1e2a10", txHash)).toEqual(
      expect.objectContaining({ status: 404, body: { error: "Payment not found" } }),
    );
    expect((await row(b)).expires_at.getTime()).toBe((await row(b)).created_at.getTime() + 24 * 3600_000);
  });
});

describe("expiry and the 5-minute auto-cancel (test clock)", () => {
  // Stopped time: "5 minutes minus 1 ms" must not drift by the milliseconds the test itself takes.
  beforeEach(() => svc.clock.freeze());
  afterEach(() => svc.clock.resume());

  it("the expiry job never expires a payment with an order in flight; it does once the order is cancelled", async () => {
    const held = await newPayment({ expiresInMs: 60_000 });
    const control = await newPayment({ expiresInMs: 60_000 });
    const { orderId } = await placeOrder(held);
    // A second order for the same rest would overpay once both fill: refused while this one is in flight.
    expect(await quote(held, `srcChainId=137&srcToken=${usdc137()}`)).toMatchObject({
      status: 409,
      body: { error: "Payment has a cross-chain order being filled" },
    });
    svc.clock.advance(60_000 + EXPIRY_EXTENSION_MS + 1);
    fake.setStatus(orderId, "Fulfilled"); // filled, but the transfer not yet seen: still in flight
    await runBridgeOrders(svc.deps);
    expect((await order(orderId)).status).toBe("fulfilled");
    await expirePayments(svc.deps);
    expect((await row(control)).status).toBe("expired");
    expect((await row(held)).status).toBe("pending");

    const second = await newPayment({ expiresInMs: 60_000 });
    const o2 = await placeOrder(second);
    svc.clock.advance(60_000 + EXPIRY_EXTENSION_MS + 1);
    await expirePayments(svc.deps);
    expect((await row(second)).status).toBe("pending"); // created: held
    fake.setStatus(o2.orderId, "ClaimedOrderCancel"); // refunded to the payer
    await runBridgeOrders(svc.deps);
    expect((await order(o2.orderId)).status).toBe("cancelled");
    await expirePayments(svc.deps);
    expect((await row(second)).status).toBe("expired");
  });

  it("an order still Created 5 minutes after it was placed is cancelled on the destination chain by the authority, then refunded", async () => {
    // The scripted provider's cancel goes to its own address: refused unless that is 777177's configured bridge
    // destination contract (test/modules/bridge/guards.test.ts has the other refusals; the stand-in's real cancel: end to end).
    const configured = withDestination(fake.cancelTo);
    svc.clock.advance(CANCEL_RETRY_MS);
    await runBridgeOrders(configured); // earlier tests' orders still created (refused so far) are cancelled first
    const id = await newPayment();
    const { orderId, payer } = await placeOrder(id);
    svc.clock.advance(AUTO_CANCEL_MS - 1);
    expect(await runBridgeOrders(configured)).toEqual({ adopted: 0, moved: 0, cancelsSent: 0 });
    expect((await order(orderId)).status).toBe("created");

    svc.clock.advance(1);
    const real = svc.deps.chains.find((c) => c.chainId === DST)!.bridgeDestination!;
    expect(await runBridgeOrders(svc.deps)).toEqual({ adopted: 0, moved: 0, cancelsSent: 0 });
    expect(await order(orderId)).toMatchObject({
      status: "created",
      cancel_tx_hash: null,
      error: `cancel-tx to ${fake.cancelTo}, not the bridge destination ${real}: refused`,
    });
    svc.clock.advance(CANCEL_RETRY_MS); // a refused attempt is made again a minute later
    expect(await runBridgeOrders(configured)).toEqual({ adopted: 0, moved: 0, cancelsSent: 1 });
    const o = await order(orderId);
    expect(o).toMatchObject({ status: "cancel_sent", cancel_tx_status: "sent" });
    // Until the cancel is mined a fill may still win the race: the payment stays held.
    expect(await bridgeOrderInFlight(svc.deps.db.pool, id)).toBe(true);
    const receipt = await h().pub.waitForTransactionReceipt({ hash: o.cancel_tx_hash, pollingInterval: 100 });
    expect(receipt.status).toBe("success");
    const tx = await h().pub.getTransaction({ hash: o.cancel_tx_hash });
    // DLN's sendEvmOrderCancel of this order, refunding the payer, carrying deBridge's fee and the keepers' share.
    const data = encodeFunctionData({
      abi: dlnDestinationAbi,
      functionName: "sendEvmOrderCancel",
      args: [fake.orders.get(orderId)!.order, payer, EXECUTION_FEE],
    });
    expect([tx.from, tx.to, tx.input, tx.value]).toEqual([authority.toLowerCase(), fake.cancelTo, data, MESSAGING_FEE + EXECUTION_FEE]);
    expect(fake.orders.get(orderId)!.params.get("srcChainOrderAuthorityAddress")).toBe(payer);

    // The next pass: the transaction is mined; the provider still says Created (not indexed): nothing is sent again.
    expect(await runBridgeOrders(configured)).toEqual({ adopted: 0, moved: 0, cancelsSent: 0 });
    expect(await order(orderId)).toMatchObject({ status: "cancel_sent", cancel_tx_status: "mined", cancel_tx_hash: o.cancel_tx_hash });
    expect(await bridgeOrderInFlight(svc.deps.db.pool, id)).toBe(false); // cancelled on the destination: lock released
    expect((await quote(id, `srcChainId=137&srcToken=${usdc137()}`)).status).toBe(200); // the payer may try again
    fake.setStatus(orderId, "SentOrderCancel");
    await runBridgeOrders(configured);
    expect(await order(orderId)).toMatchObject({ status: "cancel_sent", provider_status: "SentOrderCancel" });
    fake.setStatus(orderId, "ClaimedOrderCancel");
    expect(await runBridgeOrders(configured)).toEqual({ adopted: 0, moved: 1, cancelsSent: 0 });
    expect((await order(orderId)).status).toBe("cancelled");
    expect((await events(orderId)).map((e) => `${e.from_status}->${e.to_status}`)).toEqual([
      "quoted->created",
      "created->cancel_sent",
      "cancel_sent->cancelled",
    ]);
    const list = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent((await row(id)).order_id)}`, { apiKey: shop.apiKey });
    expect(list.body.data[0].bridge.status).toBe("cancelled");
    // What came back, to whom: the order escrowed the input itself (no pre-swap), the creation fee too.
    const refund = { token: usdc137(), symbol: "USDC", amount: formatAmount(BigInt(o.src_amount), 6), to: payer };
    expect(list.body.data[0].bridge.refund).toEqual(refund);
    const view = (await svc.http("GET", `/payments/${id}/bridge/orders`)).body.orders[0];
    expect(view.refund).toEqual({ ...refund, decimals: 6, units: o.src_amount, feeUnits: "1000" });
    expect(BridgeOrders.safeParse((await svc.http("GET", `/payments/${id}/bridge/orders`)).body).error).toBeUndefined();
  });

  it("a reverted cancel is sent again a minute later; after 3 reverts the order is failed, still held and followed", async () => {
    const configured = withDestination(fake.cancelTo);
    svc.clock.advance(CANCEL_RETRY_MS);
    await runBridgeOrders(configured); // earlier tests' due cancels out of the way
    const id = await newPayment();
    const { orderId } = await placeOrder(id);
    svc.clock.advance(AUTO_CANCEL_MS);
    const hashes: string[] = [];
    const reverted = async (o: Awaited<ReturnType<typeof order>>) => {
      // The receipt says reverted (what chains/tx-sender.ts reconcile reports for a mined transaction with status 0).
      const receipt = await h().pub.waitForTransactionReceipt({ hash: o.cancel_tx_hash, pollingInterval: 100 });
      await applyCancelOutcome(svc.deps, o, { status: "reverted", receipt: { ...receipt, status: "reverted" } });
    };
    let previous: Awaited<ReturnType<typeof order>> | undefined;
    for (let i = 1; i <= MAX_CANCEL_REVERTS; i++) {
      if (i > 1) {
        expect((await runBridgeOrders(configured)).cancelsSent, `not before a minute: cancel ${i}`).toBe(0);
        svc.clock.advance(CANCEL_RETRY_MS);
      }
      expect((await runBridgeOrders(configured)).cancelsSent, `cancel ${i}`).toBe(1);
      const o = await order(orderId);
      expect(o).toMatchObject({ status: "cancel_sent", cancel_tx_status: "sent" });
      hashes.push(o.cancel_tx_hash);
      if (previous) {
        // A replica late with the previous cancel's outcome: the order waits on this one now, nothing changes.
        await reverted(previous);
        expect(await order(orderId)).toMatchObject({ status: "cancel_sent", cancel_tx_hash: o.cancel_tx_hash, cancel_tx_status: "sent" });
      }
      await reverted(o);
      await reverted(o); // repeated: no-op
      previous = o;
      const after = await order(orderId);
      expect(after).toMatchObject({
        status: i < MAX_CANCEL_REVERTS ? "created" : "failed",
        cancel_tx_status: "reverted",
        error: `cancel transaction reverted (${o.cancel_tx_hash})`,
      });
      // Back in `created`, or `failed`, it still holds the payment: the provider may yet fill it.
      expect(await bridgeOrderInFlight(svc.deps.db.pool, id)).toBe(true);
    }
    expect(new Set(hashes).size).toBe(MAX_CANCEL_REVERTS);
    svc.clock.advance(CANCEL_RETRY_MS);
    expect((await runBridgeOrders(configured)).cancelsSent).toBe(0); // failed: never cancelled again by the service
    // Still followed: the provider's fill moves it on, and the fill releases nothing the payment needs.
    fake.setStatus(orderId, "Fulfilled");
    svc.clock.advance(10 * 60_000);
    await runBridgeOrders(configured);
    expect((await order(orderId)).status).toBe("fulfilled");
    expect((await events(orderId)).map((e) => `${e.from_status}->${e.to_status}: ${e.reason}`)).toEqual([
      "quoted->created: payer's order Created",
      "created->cancel_sent: not filled within 5 minutes: cancelled by the order authority",
      "cancel_sent->created: cancel transaction reverted (1 of 3)",
      "created->cancel_sent: not filled within 5 minutes: cancelled by the order authority",
      "cancel_sent->created: cancel transaction reverted (2 of 3)",
      "created->cancel_sent: not filled within 5 minutes: cancelled by the order authority",
      "cancel_sent->failed: cancel transaction reverted 3 times: left to the operator",
      "failed->fulfilled: provider: Fulfilled",
    ]);
  });

  it("an order filled in time is followed to claimed_unlock and never cancelled", async () => {
    const id = await newPayment();
    const { orderId } = await placeOrder(id);
    svc.clock.advance(60_000);
    fake.setStatus(orderId, "SentUnlock");
    expect((await runBridgeOrders(svc.deps)).moved).toBe(1);
    expect(await order(orderId)).toMatchObject({ status: "fulfilled", provider_status: "SentUnlock" });
    svc.clock.advance(AUTO_CANCEL_MS);
    expect((await runBridgeOrders(svc.deps)).cancelsSent).toBe(0);
    fake.setStatus(orderId, "ClaimedUnlock");
    await runBridgeOrders(svc.deps);
    expect(await order(orderId)).toMatchObject({ status: "claimed_unlock", cancel_tx_hash: null });
  });

  it("a quote the payer sent without the page reporting it is found at the provider and held like a reported one", async () => {
    const id = await newPayment();
    const before = (await row(id)).expires_at.getTime();
    const payer = privateKeyToAccount(generatePrivateKey()).address;
    const { body } = await quote(id, `srcChainId=137&srcToken=${usdc137()}&payer=${payer}`);
    fake.setStatus(body.orderId, "Created");
    expect((await runBridgeOrders(svc.deps)).adopted).toBe(0); // the page usually reports within 30 s
    svc.clock.advance(30_000);
    expect((await runBridgeOrders(svc.deps)).adopted).toBe(1);
    expect(await order(body.orderId)).toMatchObject({ status: "created", create_tx_hash: null });
    expect((await order(body.orderId)).reported_at.getTime()).toBe(svc.clock.now());
    expect((await row(id)).expires_at.getTime()).toBe(before + EXPIRY_EXTENSION_MS);
    svc.clock.advance(60_000);
    expect((await runBridgeOrders(svc.deps)).adopted).toBe(0);
    expect((await row(id)).expires_at.getTime()).toBe(before + EXPIRY_EXTENSION_MS);
  });
});

describe("polling within the provider's request budget (test clock)", () => {
  beforeEach(() => svc.clock.freeze());
  afterEach(() => svc.clock.resume());
  const asked = (orderId: string) => fake.requests.filter((r) => r.path === `/v1.0/dln/order/${orderId}/status`).length;
  const statusRequests = () => fake.requests.filter((r) => r.path.endsWith("/status")).length;

  it("asks young orders every pass, then every 30 s after 10 minutes and every 5 minutes after an hour", async () => {
    const { orderId } = await placeOrder(await newPayment());
    const pass = async () => {
      const n = asked(orderId);
      await runBridgeOrders(svc.deps);
      return asked(orderId) - n;
    };
    expect([await pass(), await pass()]).toEqual([1, 1]); // placed just now: every pass
    svc.clock.advance(10 * 60_000 + 1);
    expect([await pass(), await pass()]).toEqual([1, 0]);
    svc.clock.advance(29_999);
    expect(await pass()).toBe(0);
    svc.clock.advance(1);
    expect(await pass()).toBe(1);
    svc.clock.advance(60 * 60_000);
    expect([await pass(), await pass()]).toEqual([1, 0]);
    svc.clock.advance(5 * 60_000 - 1);
    expect(await pass()).toBe(0);
    svc.clock.advance(1);
    expect(await pass()).toBe(1);
  });

  it("a pass makes at most its share of BRIDGE_STATUS_REQUESTS_PER_MINUTE, the least recently asked order first", async () => {
    const tight = { ...svc.deps, config: { ...svc.deps.config, BRIDGE_STATUS_REQUESTS_PER_MINUTE: 12, BRIDGE_POLL_INTERVAL_MS: 5_000 } };
    expect(statusBudget(tight.config)).toBe(1);
    expect(statusBudget({ BRIDGE_STATUS_REQUESTS_PER_MINUTE: 30, BRIDGE_POLL_INTERVAL_MS: 500 })).toBe(1); // never 0
    expect(statusBudget({ BRIDGE_STATUS_REQUESTS_PER_MINUTE: 300, BRIDGE_POLL_INTERVAL_MS: 5_000 })).toBe(25);
    const a = (await placeOrder(await newPayment())).orderId;
    svc.clock.advance(1); // b placed after a: the tie-break on equal checked_at
    const b = (await placeOrder(await newPayment())).orderId;
    await runBridgeOrders(svc.deps); // both asked once, at this instant
    // Earlier tests' live orders out of the way (asked "tomorrow"), so the turns below are a's and b's alone.
    await svc.deps.db.pool.query(`UPDATE bridge_orders SET checked_at = $3 WHERE id <> ALL($1::text[]) AND status = ANY($2::text[])`, [
      [a, b],
      ["created", "fulfilled", "cancel_sent"],
      new Date(svc.clock.now() + 86_400_000),
    ]);
    const served: string[] = [];
    for (let i = 0; i < 4; i++) {
      const [n, na, nb] = [statusRequests(), asked(a), asked(b)];
      svc.clock.advance(1);
      await runBridgeOrders(tight);
      expect(statusRequests() - n).toBe(1);
      if (asked(a) > na) served.push("a");
      if (asked(b) > nb) served.push("b");
    }
    // One order a pass, in turn: a (placed first), then b (asked longest ago), then a again.
    expect(served).toEqual(["a", "b", "a", "b"]);
  });
});

describe("rate limit", () => {
  it("quotes and reports share 30 requests a minute per address", async () => {
    const id = await newPayment();
    svc.clock.advance(120_000); // a full budget
    svc.clock.freeze();
    try {
      for (let i = 0; i < 30; i++) expect((await quote(id, `srcChainId=137&srcToken=${usdc137()}`)).status, `request ${i + 1}`).toBe(200);
      const r = await report(id, randomHash());
      expect([r.status, r.body]).toEqual([429, { error: "Too many requests" }]);
      expect(r.headers.get("retry-after")).toBe("2");
      // The orders list the page polls has no budget of its own.
      expect((await svc.http("GET", `/payments/${id}/bridge/orders`)).status).toBe(200);
    } finally {
      svc.clock.resume();
    }
  });
});

// End to end with the run's stack: the DLN stand-in and its solver (local/bridge/, BRIDGE_API_URL of the stack), our
// bridge contracts on 137 and 777177, and every processor of the service (detector, settler, bridge-orders...).
describe("end to end through the stand-in: USDT on 777177 paid in USDC from 137", () => {
  let e2e: TestService;
  let shop2: { id: string; apiKey: string };
  const BASE = inject("stackEnv").BRIDGE_API_URL;
  const src = () => chainHelpers(e2e.deps.chains.find((c) => c.chainId === 137)!);
  const dst = () => chainHelpers(e2e.deps.chains.find((c) => c.chainId === DST)!);
  const WAIT = { timeout: 150_000 };

  beforeAll(async () => {
    expect(BASE, "the test stack runs the DLN stand-in (local/stack.ts)").toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    e2e = await startTestService({ env: { GAS_TANK_CONFIRMATIONS: "1", BRIDGE_POLL_INTERVAL_MS: "500" } });
    shop2 = await e2e.newMerchant({ name: "Cross-chain shop" });
    // The Gas Tank pays the fees, so the merchant gets the whole amount.
    const bal = await e2e.http("GET", "/balance", { apiKey: shop2.apiKey });
    await dst().pay("USDT", bal.body.depositAddresses.find((d: any) => d.chainId === DST).address, parseUnits("2", 6));
    await waitFor(async () => (await e2e.http("GET", "/balance", { apiKey: shop2.apiKey })).body.balance === "2.000000", {
      ...WAIT,
      what: "Gas Tank credit",
    });
  });
  afterAll(() => e2e?.stop());

  async function pay(amount: string) {
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const r = await e2e.http("POST", "/payments", {
      apiKey: shop2.apiKey,
      body: { merchant: to, chainId: String(DST), token: dst().token("USDT").address, amount, orderId: `X-${Math.random()}` },
    });
    expect(r.status).toBe(200);
    const id = (r.body.url as string).split("/pay/")[1]!;
    const { rows } = await e2e.deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [id]);
    return { id, merchant: to, payment: rows[0]! };
  }
  /** The payer on 137: USDC minted, the quote's approval and order transaction sent, the transaction reported. */
  async function swap(paymentId: string, minted: bigint) {
    const payer = await src().newPayer();
    await src().mint("USDC", payer.address, minted, payer);
    const q = await e2e.http(
      "GET",
      `/payments/${paymentId}/bridge/quote?srcChainId=137&srcToken=${src().token("USDC").address}&payer=${payer.address}`,
    );
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    const wallet = src().walletOf(payer);
    await src().wait(
      await wallet.writeContract({
        address: src().token("USDC").address,
        abi: testTokenAbi,
        functionName: "approve",
        args: [(q.body.tx.allowanceTarget ?? q.body.tx.to) as Address, BigInt(q.body.srcToken.units)],
      }),
    );
    const sent = await src().wait(await wallet.sendTransaction({ to: q.body.tx.to, data: q.body.tx.data, value: BigInt(q.body.tx.value) }));
    const sentAt = Date.now();
    // The provider may not have read the transaction's logs yet: 409, then retry (as the payer page does).
    const reported = await waitFor(
      async () => {
        const r = await e2e.http("POST", `/payments/${paymentId}/bridge/orders`, { body: { txHash: sent.transactionHash } });
        if (r.status === 409) return null;
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body;
      },
      { ...WAIT, what: "order reported" },
    );
    return { payer, quote: q.body, orderId: q.body.orderId as string, reported, sentAt };
  }
  const bridgeOrder = async (id: string) => (await e2e.deps.db.pool.query(`SELECT * FROM bridge_orders WHERE id = $1`, [id])).rows[0];
  const statusOf = async (id: string) => (await e2e.deps.db.pool.query(`SELECT status FROM payments WHERE id = $1`, [id])).rows[0].status;

  it("the payment completes; the merchant gets exactly the amount, the payer pays exactly the quote", async () => {
    const { id, merchant: to, payment } = await pay("10");
    const { payer, quote: q, orderId, reported, sentAt } = await swap(id, 50_000_000n);
    expect(reported.orders[0]).toMatchObject({ orderId, status: "created" });
    expect(q.dstToken.units).toBe("10000000");
    expect(await src().balanceOf("USDC", payer.address)).toBe(50_000_000n - BigInt(q.srcToken.units));

    await waitFor(async () => (await statusOf(id)) === "completed", { ...WAIT, what: "payment completed" });
    console.log(`[measure] cross-chain: payer's transaction mined -> completed seen: ${Date.now() - sentAt} ms`);
    expect(await dst().balanceOf("USDT", payment.recipient_address as Address)).toBe(0n); // swept
    expect(await dst().balanceOf("USDT", to)).toBe(10_000_000n);
    const { rows } = await e2e.deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [id]);
    expect([rows[0]!.received_units, rows[0]!.overpayment_units]).toEqual(["10000000", "0"]);
    await waitFor(async () => (await bridgeOrder(orderId)).status === "claimed_unlock", { ...WAIT, what: "order claimed_unlock" });
    const list = await e2e.http("GET", `/v1/payments?orderId=${encodeURIComponent(rows[0]!.order_id)}`, { apiKey: shop2.apiKey });
    expect(list.body.data[0]).toMatchObject({
      status: "completed",
      receivedAmount: "10",
      bridge: { orderId, srcChainId: 137, srcToken: src().token("USDC").address, status: "claimed_unlock" },
    });
  });

  it("an order the solver skips is cancelled 5 minutes later (test clock) and the payer refunded exactly", async () => {
    const { id, payment } = await pay("5");
    const skip = `${BASE}/local/solver/skip/${payment.recipient_address}`;
    expect((await fetch(skip, { method: "POST" })).status).toBe(204);
    try {
      const before = payment.expires_at.getTime();
      const { payer, quote: q, orderId } = await swap(id, 20_000_000n);
      expect(await src().balanceOf("USDC", payer.address)).toBe(20_000_000n - BigInt(q.srcToken.units));
      expect((await e2e.deps.db.pool.query(`SELECT expires_at FROM payments WHERE id = $1`, [id])).rows[0].expires_at.getTime()).toBe(
        before + EXPIRY_EXTENSION_MS,
      );
      await e2e.processors!.runOnce("bridge-orders");
      expect((await bridgeOrder(orderId)).status).toBe("created");

      e2e.clock.advance(AUTO_CANCEL_MS);
      await waitFor(
        async () => {
          await e2e.processors!.runOnce("bridge-orders");
          return (await bridgeOrder(orderId)).status === "cancelled";
        },
        { ...WAIT, interval: 500, what: "order cancelled and refunded" },
      );
      const o = await bridgeOrder(orderId);
      const cancel = await dst().pub.getTransaction({ hash: o.cancel_tx_hash });
      expect(cancel.from).toBe(privateKeyToAccount(e2e.deps.config.SETTLER_PRIVATE_KEY as Hex).address.toLowerCase());
      expect(cancel.to).toBe(e2e.deps.chains.find((c) => c.chainId === DST)!.bridgeDestination!.toLowerCase());
      expect(await src().balanceOf("USDC", payer.address)).toBe(20_000_000n);
      expect(await dst().balanceOf("USDT", payment.recipient_address as Address)).toBe(0n);
      expect(await statusOf(id)).toBe("pending"); // the payer may still pay: the lock is released, the link open
    } finally {
      await fetch(skip, { method: "DELETE" });
    }
  });
});

describe("DLN's real terms through the stand-in: the messaging fee on 137, DLN's address, a pre-swapped refund", () => {
  let e2e: TestService;
  let shop3: { id: string; apiKey: string };
  const BASE = inject("stackEnv").BRIDGE_API_URL;
  const on = (chainId: number) => chainHelpers(e2e.deps.chains.find((c) => c.chainId === chainId)!);
  const WAIT = { timeout: 150_000 };

  beforeAll(async () => {
    e2e = await startTestService({ env: { GAS_TANK_CONFIRMATIONS: "1", BRIDGE_POLL_INTERVAL_MS: "500" } });
    shop3 = await e2e.newMerchant({ name: "DLN terms shop" });
  });
  afterAll(() => e2e?.stop());

  async function pay(chainId: number, symbol: string, amount: string) {
    const r = await e2e.http("POST", "/payments", {
      apiKey: shop3.apiKey,
      body: {
        merchant: privateKeyToAccount(generatePrivateKey()).address,
        chainId: String(chainId),
        token: on(chainId).token(symbol).address,
        amount,
        orderId: `T-${Math.random()}`,
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = (r.body.url as string).split("/pay/")[1]!;
    return { id, payment: (await e2e.deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [id])).rows[0]! };
  }

  /** A payer on `srcChainId` pays with `srcToken` (an ERC-20 minted first, or the native coin) and reports it. */
  async function placeWith(paymentId: string, srcChainId: number, srcToken: Address, minted: bigint) {
    const src = on(srcChainId);
    const payer = await src.newPayer();
    const native = srcToken === zeroAddress;
    if (!native)
      await src.wait(
        await src
          .walletOf(payer)
          .writeContract({ address: srcToken, abi: testTokenAbi, functionName: "mint", args: [payer.address, minted] }),
      );
    const q = await e2e.http(
      "GET",
      `/payments/${paymentId}/bridge/quote?srcChainId=${srcChainId}&srcToken=${srcToken}&payer=${payer.address}`,
    );
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    const wallet = src.walletOf(payer);
    if (!native)
      await src.wait(
        await wallet.writeContract({
          address: srcToken,
          abi: testTokenAbi,
          functionName: "approve",
          args: [(q.body.tx.allowanceTarget ?? q.body.tx.to) as Address, BigInt(q.body.srcToken.units)],
        }),
      );
    const sent = await src.wait(await wallet.sendTransaction({ to: q.body.tx.to, data: q.body.tx.data, value: BigInt(q.body.tx.value) }));
    await waitFor(
      async () => {
        const r = await e2e.http("POST", `/payments/${paymentId}/bridge/orders`, { body: { txHash: sent.transactionHash } });
        if (r.status === 409) return null;
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body;
      },
      { ...WAIT, what: "order reported" },
    );
    return { payer, quote: q.body, orderId: q.body.orderId as string, sent };
  }

  const bridgeOrder = async (id: string) => (await e2e.deps.db.pool.query(`SELECT * FROM bridge_orders WHERE id = $1`, [id])).rows[0];

  /** Leaves the payment's order unfilled (the stand-in's solver skips its recipient), runs `f`, then lets it fill again. */
  async function unfilled<T>(payment: PaymentRow, f: () => Promise<T>): Promise<T> {
    const skip = `${BASE}/local/solver/skip/${payment.recipient_address}`;
    expect((await fetch(skip, { method: "POST" })).status).toBe(204);
    try {
      return await f();
    } finally {
      await fetch(skip, { method: "DELETE" });
    }
  }

  async function cancelled(orderId: string) {
    e2e.clock.advance(AUTO_CANCEL_MS);
    await waitFor(
      async () => {
        await e2e.processors!.runOnce("bridge-orders");
        return (await bridgeOrder(orderId)).status === "cancelled";
      },
      { ...WAIT, interval: 500, what: "order cancelled and refunded" },
    );
    return bridgeOrder(orderId);
  }

  it("a 137 payment's unfilled order is cancelled at DLN's DlnDestination (no BRIDGE_DESTINATION_ADDRESS_137) with its 0.5 MATIC fee; the payer is refunded exactly", async () => {
    // No operator setting: the registry's DLN address is the destination, and the local 137 has the stand-in there.
    const polygon = e2e.deps.chains.find((c) => c.chainId === 137)!;
    const env = inject("stackEnv");
    expect(env.BRIDGE_DESTINATION_ADDRESS_137).toBeUndefined();
    expect(readDeployments(env).chains["137"]?.bridgeDestination).toBeUndefined();
    expect(polygon.bridgeDestination).toBe(DLN_EVM.destination);
    const { id, payment } = await pay(137, "USDC", "4");
    const usdc777 = on(DST).token("USDC").address;
    await unfilled(payment, async () => {
      const { payer, quote: q, orderId } = await placeWith(id, DST, usdc777, 10_000_000n);
      expect(q.preSwap).toBe(false); // USDC is a reserve asset: escrowed as it is
      expect(await on(DST).balanceOf("USDC", payer.address)).toBe(10_000_000n - BigInt(q.srcToken.units));
      const o = await cancelled(orderId);
      const cancel = await on(137).pub.getTransaction({ hash: o.cancel_tx_hash });
      expect(cancel.to).toBe(DLN_EVM.destination.toLowerCase());
      // deBridge's fee, read the way the service reads it: the gate behind the destination, its global fixed fee.
      const gate = await on(137).pub.readContract({ address: DLN_EVM.destination, abi: dlnDestinationAbi, functionName: "deBridgeGate" });
      const fee = await on(137).pub.readContract({ address: gate, abi: deBridgeGateAbi, functionName: "globalFixedNativeFee" });
      expect(fee).toBe(parseUnits("0.5", 18));
      expect(cancel.value > fee).toBe(true); // the fee plus the keepers' execution fee
      const receipt = await on(137).pub.getTransactionReceipt({ hash: o.cancel_tx_hash });
      expect(receipt.status).toBe("success");
      expect(await on(DST).balanceOf("USDC", payer.address)).toBe(10_000_000n); // every unit back
      expect(o.refund_to).toBe(payer.address);
    });
  });

  it("a pre-swapped input (USDT0) is refunded in USDC, srcChainTokenOut's amount: recorded, shown to the payer and the merchant", async () => {
    const { id, payment } = await pay(DST, "USDT", "3");
    const usdt137 = on(137).token("USDT0").address;
    await unfilled(payment, async () => {
      const { payer, quote: q, orderId } = await placeWith(id, 137, usdt137, 10_000_000n);
      expect(q.preSwap).toBe(true);
      expect(q.refund).toMatchObject({ address: on(137).token("USDC").address, symbol: "USDC", decimals: 6 });
      expect(await on(137).balanceOf("USDT0", payer.address)).toBe(10_000_000n - BigInt(q.srcToken.units));
      const o = await cancelled(orderId);
      expect([o.refund_token, o.refund_symbol, o.refund_units]).toEqual([q.refund.address, "USDC", q.refund.units]);
      // The USDT0 went to the swap; the refund is the USDC the order escrowed, exactly.
      expect(await on(137).balanceOf("USDT0", payer.address)).toBe(10_000_000n - BigInt(q.srcToken.units));
      expect(await on(137).balanceOf("USDC", payer.address)).toBe(BigInt(q.refund.units));
      const view = (await e2e.http("GET", `/payments/${id}/bridge/orders`)).body.orders[0];
      expect(view.refund).toMatchObject({
        token: q.refund.address,
        symbol: "USDC",
        units: q.refund.units,
        amount: q.refund.amount,
        to: payer.address,
      });
      const list = await e2e.http("GET", `/v1/payments?orderId=${encodeURIComponent(payment.order_id)}`, { apiKey: shop3.apiKey });
      expect(list.body.data[0].bridge).toMatchObject({
        status: "cancelled",
        srcToken: usdt137,
        refund: { token: q.refund.address, symbol: "USDC", amount: q.refund.amount, to: payer.address },
      });
    });
  });
});
