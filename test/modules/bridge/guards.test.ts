import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { encodeFunctionData, parseUnits, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { AppDeps } from "../../../core/deps.js";
import { CANCEL_SELECTORS, AUTO_CANCEL_MS, CANCEL_RETRY_MS } from "../../../modules/bridge/index.js";
import { runBridgeOrders } from "../../../flows/bridge-orders.js";
import { detector } from "../../../processors/detector.js";
import { waitFor } from "../../helpers/chain.js";
import type { TestService } from "../../helpers/service.js";
import type { DlnFake } from "./dln-fake.js";
import { dlnDestinationAbi, type DlnOrder } from "../../../modules/bridge/index.js";
import { bridgeScene, DST, EXECUTION_FEE, MESSAGING_FEE } from "./scene.js";

// What the service refuses around cross-chain orders: the provider's cancel transaction is signed only when it is
// DLN's cancel of this very order, refunding the payer, to the destination chain's bridge contract, carrying deBridge's
// messaging fee (read on chain) plus a bounded execution fee; one order's failure does not stop the auto-cancel pass; a withdraw and a cancel wait for the order in flight; a
// repeated report never re-applies `Created`; an order id of another payment is refused.

vi.setConfig({ testTimeout: 120_000 });
const scene = bridgeScene("Bridge guards shop");
const { h, usdc137, newPayment, row, order, quote, report, placeOrder, withDestination } = scene;
let fake: DlnFake;
let svc: TestService;
let shop: { id: string; apiKey: string };
beforeAll(() => void ({ fake, svc, shop } = scene.get()));

/** The fake's cancel-tx answer for an order, with some fields replaced (served once). */
function cancelAnswer(orderId: string, change: Record<string, string>) {
  const o = fake.orders.get(orderId)!;
  fake.override(`/v1.0/dln/order/${orderId}/cancel-tx`, 200, {
    to: fake.cancelTo,
    data: cancelData(o.order, o.params.get("srcChainOrderAuthorityAddress")! as Address),
    value: String(fake.cancelValue),
    chainId: DST,
    from: o.params.get("dstChainOrderAuthorityAddress"),
    cancelBeneficiary: o.params.get("srcChainOrderAuthorityAddress"),
    ...change,
  });
}

const cancelData = (order: DlnOrder, beneficiary: Address) =>
  encodeFunctionData({ abi: dlnDestinationAbi, functionName: "sendEvmOrderCancel", args: [order, beneficiary, EXECUTION_FEE] });

describe("the auto-cancel signs only this order's DLN cancel, refunding the payer, at deBridge's fee (test clock)", () => {
  beforeEach(() => svc.clock.freeze());
  afterEach(() => svc.clock.resume());

  it("refuses another address, no configured contract, another function or order, another beneficiary, a wrong value; then sends the right one", async () => {
    const { orderId, payer } = await placeOrder(await newPayment());
    svc.clock.advance(AUTO_CANCEL_MS);
    const configured = withDestination(fake.cancelTo);
    const authority = privateKeyToAccount(svc.deps.config.SETTLER_PRIVATE_KEY as Hex).address;
    const nonce = () => h().pub.getTransactionCount({ address: authority, blockTag: "pending" });
    const before = await nonce();
    const refused = async (deps: AppDeps, error: string | RegExp) => {
      svc.clock.advance(CANCEL_RETRY_MS); // an attempt that went wrong is made again a minute later
      expect(await runBridgeOrders(deps)).toEqual({ adopted: 0, moved: 0, cancelsSent: 0 });
      const o = await order(orderId);
      expect(o).toMatchObject({ status: "created", cancel_tx_hash: null });
      if (typeof error === "string") expect(o.error).toBe(error);
      else expect(o.error).toMatch(error);
    };

    // The provider's own address (the stack's deployments name the real BridgeDestination for 777177).
    const real = svc.deps.chains.find((c) => c.chainId === DST)!.bridgeDestination!;
    await refused(svc.deps, `cancel-tx to ${fake.cancelTo}, not the bridge destination ${real}: refused`);
    await refused(withDestination(undefined), `no bridge destination contract configured for chain ${DST}: cannot cancel`);
    cancelAnswer(orderId, { data: `0xa9059cbb${"00".repeat(64)}` });
    await refused(configured, "cancel-tx calls 0xa9059cbb, not a DLN order cancel: refused");
    cancelAnswer(orderId, { data: "0x" });
    await refused(configured, "cancel-tx calls 0x, not a DLN order cancel: refused");
    const o = fake.orders.get(orderId)!.order;
    cancelAnswer(orderId, { data: cancelData({ ...o, takeAmount: o.takeAmount + 1n }, payer) });
    await refused(configured, `cancel-tx order does not hash to ${orderId}: refused`);
    const thief = privateKeyToAccount(generatePrivateKey()).address;
    cancelAnswer(orderId, { data: cancelData(o, thief) });
    await refused(configured, `cancel-tx refunds ${thief}, not the payer ${payer}: refused`);
    // deBridge's fee is read from the gate behind the destination: below it the cancel would revert; and without a native
    // price (777177 has none) at most the fee again may go to the keepers.
    cancelAnswer(orderId, { value: String(MESSAGING_FEE - 1n) });
    await refused(configured, `cancel-tx value ${MESSAGING_FEE - 1n} wei below the bridge's messaging fee ${MESSAGING_FEE}: would revert`);
    cancelAnswer(orderId, { value: String(2n * MESSAGING_FEE + 1n) });
    await refused(
      configured,
      /^cancel-tx value 2000000000000001 wei: 1000000000000001 above the messaging fee 1000000000000000, more than the 1000000000000000 allowed/,
    );
    expect(await nonce()).toBe(before); // nothing signed or sent

    cancelAnswer(orderId, { to: fake.cancelTo.toUpperCase().replace("0X", "0x") });
    svc.clock.advance(CANCEL_RETRY_MS - 1);
    expect(await runBridgeOrders(configured)).toEqual({ adopted: 0, moved: 0, cancelsSent: 0 }); // not yet a minute
    svc.clock.advance(1);
    expect(await runBridgeOrders(configured)).toEqual({ adopted: 0, moved: 0, cancelsSent: 1 });
    const sent = await order(orderId);
    expect(sent).toMatchObject({ status: "cancel_sent", error: null, refund_to: payer });
    const tx = await h().pub.getTransaction({ hash: sent.cancel_tx_hash });
    expect([tx.to, tx.input, tx.value]).toEqual([fake.cancelTo, cancelData(o, payer), MESSAGING_FEE + EXECUTION_FEE]);
    expect(CANCEL_SELECTORS).toEqual(["0xd38d9626", "0x9327145d"]); // DLN's two
  });

  it("an unexpected error on one order is noted on it; the pass goes on to cancel the next", async () => {
    const first = await placeOrder(await newPayment());
    svc.clock.advance(1);
    const second = await placeOrder(await newPayment());
    svc.clock.advance(AUTO_CANCEL_MS);
    // The authority holds enough for the second cancel but not the first's (within the bound, above the balance): the
    // node refuses the first's estimate (not a revert, not a domain error).
    const authority = privateKeyToAccount(svc.deps.config.SETTLER_PRIVATE_KEY as Hex).address;
    const setBalance = (wei: bigint) =>
      h().pub.request({ method: "anvil_setBalance" as never, params: [authority, `0x${wei.toString(16)}`] as never });
    const deps = withDestination(fake.cancelTo);
    cancelAnswer(first.orderId, { value: String(2n * MESSAGING_FEE) });
    await setBalance((3n * MESSAGING_FEE) / 2n);
    try {
      expect(await runBridgeOrders(deps)).toEqual({ adopted: 0, moved: 0, cancelsSent: 1 });
    } finally {
      await setBalance(10n ** 24n);
    }
    const failed = await order(first.orderId);
    expect(failed).toMatchObject({ status: "created", cancel_tx_hash: null });
    expect(failed.error).toMatch(/^cancel failed: /);
    expect(await order(second.orderId)).toMatchObject({ status: "cancel_sent", error: null });
    // A minute later it is tried again (the provider's answer is right this time).
    svc.clock.advance(CANCEL_RETRY_MS);
    expect(await runBridgeOrders(deps)).toEqual({ adopted: 0, moved: 0, cancelsSent: 1 });
    expect(await order(first.orderId)).toMatchObject({ status: "cancel_sent", error: null });
  });
});

describe("withdraw is locked while an order is in flight", () => {
  it("POST /v1/payments/{id}/withdraw answers 409 while the order is created; the payment stays as it was", async () => {
    const id = await newPayment({ amount: "10" });
    await h().pay("USDT", (await row(id)).recipient_address as Address, parseUnits("4", 6));
    const detect = detector();
    await waitFor(async () => (await detect.run(svc.deps), (await row(id)).received_units === "4000000"), {
      timeout: 120_000,
      what: "partial payment",
    });
    const { orderId } = await placeOrder(id);
    const before = await row(id);
    const events = async () =>
      (await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM payment_events WHERE payment_id = $1`, [id])).rows[0].n;
    const eventsBefore = await events();

    const w = await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: shop.apiKey });
    expect([w.status, w.body]).toEqual([409, { success: false, error: "Payment has a cross-chain order being filled", data: null }]);
    expect(await row(id)).toEqual(before);
    expect(await events()).toBe(eventsBefore);

    // Refunded to the payer: the lock is released and the merchant may withdraw what arrived.
    fake.setStatus(orderId, "ClaimedOrderCancel");
    await runBridgeOrders(svc.deps);
    expect((await order(orderId)).status).toBe("cancelled");
    const ok = await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: shop.apiKey });
    expect([ok.status, ok.body]).toEqual([
      200,
      { success: true, data: { paymentId: id, status: "withdraw_request", receivedAmount: "4" }, error: null },
    ]);
  });
});

describe("cancel is locked while an order is in flight", () => {
  it("POST /v1/payments/{id}/cancel answers 409 while the order is created; accepted once the payer is refunded", async () => {
    const id = await newPayment({ amount: "10" });
    const { orderId } = await placeOrder(id);
    const before = await row(id);
    const refused = await svc.http("POST", `/v1/payments/${id}/cancel`, { apiKey: shop.apiKey });
    expect([refused.status, refused.body]).toEqual([
      409,
      { success: false, error: "Payment has a cross-chain order being filled", data: null },
    ]);
    expect(await row(id)).toEqual(before);

    fake.setStatus(orderId, "ClaimedOrderCancel");
    await runBridgeOrders(svc.deps);
    expect((await order(orderId)).status).toBe("cancelled");
    const ok = await svc.http("POST", `/v1/payments/${id}/cancel`, { apiKey: shop.apiKey });
    expect([ok.status, ok.body]).toEqual([200, { success: true, error: null, data: { paymentId: id, status: "cancelled" } }]);
    expect((await row(id)).status).toBe("cancelled");
  });
});

describe("reports and quotes touch only what is theirs", () => {
  it("a repeated report leaves an order the poll has moved as it is", async () => {
    const { orderId, txHash } = await placeOrder(await newPayment());
    const id = (await order(orderId)).payment_id;
    fake.setStatus(orderId, "Fulfilled");
    await runBridgeOrders(svc.deps);
    expect(await order(orderId)).toMatchObject({ status: "fulfilled", provider_status: "Fulfilled" });
    expect((await report(id, txHash)).status).toBe(200);
    expect(await order(orderId)).toMatchObject({ status: "fulfilled", provider_status: "Fulfilled" });

    // An order whose cancel reverted stays for the poll to judge, never `failed` on the payer's word.
    const other = await placeOrder(await newPayment());
    const otherId = (await order(other.orderId)).payment_id;
    await svc.deps.db.pool.query(`UPDATE bridge_orders SET status = 'cancel_sent', cancel_tx_status = 'reverted' WHERE id = $1`, [
      other.orderId,
    ]);
    expect((await report(otherId, other.txHash)).status).toBe(200);
    expect(await order(other.orderId)).toMatchObject({ status: "cancel_sent", provider_status: "Created" });
  });

  it("a quote whose order id already belongs to another payment is refused with 409", async () => {
    const a = await newPayment({ amount: "7" });
    const b = await newPayment({ amount: "7" });
    const payer = privateKeyToAccount(generatePrivateKey()).address;
    const qa = await quote(a, `srcChainId=137&srcToken=${usdc137()}&payer=${payer}`);
    expect(qa.status).toBe(200);
    // The provider answers b's request with a's order id (same amounts, so the answer passes the other checks).
    const sentForA = fake.requests.at(-1)!;
    const answer = (await (await fetch(`${fake.url}${sentForA.path}?${sentForA.query}`)).json()) as Record<string, unknown>;
    fake.override("/v1.0/dln/order/create-tx", 200, { ...answer, orderId: qa.body.orderId });
    const qb = await quote(b, `srcChainId=137&srcToken=${usdc137()}&payer=${payer}`);
    expect([qb.status, qb.body]).toEqual([409, { error: "Bridge order belongs to another payment" }]);
    expect(await order(qa.body.orderId)).toMatchObject({ payment_id: a, status: "quoted" });
  });
});
