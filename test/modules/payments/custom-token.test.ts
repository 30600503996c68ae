import { createHash } from "node:crypto";
import { getAddress, parseUnits, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testTokenAbi, testTokenBytecode } from "../../../abis/TestToken.js";
import { parseAmount } from "../../../core/money.js";
import { allProcessors } from "../../../processors/index.js";
import { startProcessors, type ProcessorRunner } from "../../../processors/runner.js";
import { webhookDispatcher, type WebhookDispatcherProcessor } from "../../../processors/webhook-dispatcher.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { startReceiver, type Receiver } from "../webhooks/helpers/receiver.js";

// A merchant's own ERC-20 (not in the registry), deployed here with 6 and with 18 decimals and priced
// by customPriceUsd: accepted, paid, indexed (the indexer keeps Transfers of any token to our
// addresses), detected, settled to the merchant, completed, and the webhook delivered.

vi.setConfig({ testTimeout: 300_000 });
const WAIT = { timeout: 150_000 };
const CHAIN = 777177;

let receiver: Receiver;
let svc: TestService;
let dispatcher: WebhookDispatcherProcessor;
let runner: ProcessorRunner;
let shop: { id: string; apiKey: string; secret: string };

beforeAll(async () => {
  receiver = await startReceiver();
  svc = await startTestService({ processors: false });
  dispatcher = webhookDispatcher({ tls: { ca: receiver.ca } });
  runner = startProcessors(
    svc.deps,
    allProcessors().map((p) => (p.name === dispatcher.name ? dispatcher : p)),
    () => {},
  );
  const m = await svc.newMerchant({ name: "Custom token shop" });
  const res = await svc.http("PUT", "/v1/webhooks", { apiKey: m.apiKey, body: { url: new URL("/hooks", receiver.url).toString() } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  shop = { ...m, secret: res.body.data.secret as string };
});
afterAll(async () => {
  await runner?.stop();
  await dispatcher?.close();
  await svc?.stop();
  await receiver?.close();
});

const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;

async function deployToken(decimals: number, symbol = "SHOP"): Promise<Address> {
  const h = chainHelpers(chain());
  const deployer = await h.newPayer();
  const hash = await h
    .walletOf(deployer)
    .deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Shop Coin", symbol, decimals] });
  return getAddress((await h.wait(hash)).contractAddress!);
}

async function listed(orderId: string) {
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(orderId)}`, { apiKey: shop.apiKey });
  return res.body.data[0];
}

describe("custom tokens end to end", () => {
  // Issue 35: a custom token's decimals are read from its contract at creation, after the key; the message is the same.
  it("more decimals than the custom token has -> 400 Amount must have at most N decimal places", async () => {
    const token = await deployToken(6, "SIX");
    const base = { merchant: privateKeyToAccount(generatePrivateKey()).address, chainId: String(CHAIN), token, customPriceUsd: "1" };
    for (const [amount, error] of [
      ["1.0000001", "Amount must have at most 6 decimal places"],
      ["0.0000000", "Amount must be a positive number"],
    ]) {
      const orderId = `six-${Math.random()}`;
      const res = await svc.http("POST", "/payments", { apiKey: shop.apiKey, body: { ...base, amount, orderId } });
      expect(res, amount).toMatchObject({ status: 400, body: { error } });
      expect(await listed(orderId)).toBeUndefined();
    }
  });

  // Issue 10: the oracle prices by symbol, which any contract can claim.
  it("a worthless custom token named ETH does not borrow the oracle's ETH price", async () => {
    const token = await deployToken(18, "ETH");
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const base = { merchant: to, chainId: String(CHAIN), token, amount: "1", gasless: true };
    const unpriced = await svc.http("POST", "/payments", { apiKey: shop.apiKey, body: { ...base, orderId: `eth-${Math.random()}` } });
    expect(unpriced).toMatchObject({ status: 503, body: { error: "Oracle price unavailable" } });

    const orderId = `eth-custom-${Math.random()}`;
    const priced = await svc.http("POST", "/payments", { apiKey: shop.apiKey, body: { ...base, orderId, customPriceUsd: "0.000001" } });
    expect(priced.status, JSON.stringify(priced.body)).toBe(200);
    // Priced by the merchant, so not gasless: fees come from the Gas Tank, never in the worthless token.
    expect(await listed(orderId)).toMatchObject({ priceSource: "custom", gasless: false });
  });

  it.each([6, 18])("a %i-decimal token priced by customPriceUsd: paid, settled, completed, webhook delivered", async (decimals) => {
    const token = await deployToken(decimals);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const orderId = `custom-${decimals}-${Math.random()}`;
    const created = await svc.http("POST", "/payments", {
      apiKey: shop.apiKey,
      body: { merchant: to, chainId: String(CHAIN), token, amount: "12.5", orderId, customPriceUsd: "2", payerCoversFee: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const p = await listed(orderId);
    expect(p).toMatchObject({ status: "pending", amount: "12.5", chainId: String(CHAIN) });
    expect(p.token).toMatchObject({ address: token, symbol: "SHOP", decimals });
    expect(p.priceSource).toBe("custom");

    // The payer covers the fees: the amount plus every fee, in the token, at the custom price.
    const due = parseAmount(p.amount, decimals) + parseAmount(p.fees.totalFee, decimals);
    expect(parseAmount(p.fees.processingFee, decimals)).toBe(parseAmount("0.05", decimals)); // 0.10 USD at 2 USD per token
    const h = chainHelpers(chain());
    const payer = await h.newPayer();
    const w = h.walletOf(payer);
    await h.wait(await w.writeContract({ address: token, abi: testTokenAbi, functionName: "mint", args: [payer.address, due] }));
    await h.wait(await w.writeContract({ address: token, abi: testTokenAbi, functionName: "transfer", args: [p.recipientAddress, due] }));

    const done = await waitFor(
      async () => {
        const q = await listed(orderId);
        return q.status === "completed" && q;
      },
      { ...WAIT, what: `the ${decimals}-decimal payment to complete` },
    );
    expect(parseAmount(done.receivedAmount, decimals)).toBe(due);
    // The merchant receives exactly the amount; nothing is left on the payment address.
    const balanceOf = (who: Address) =>
      svc.deps.clients.get(CHAIN)!.readContract({ address: token, abi: testTokenAbi, functionName: "balanceOf", args: [who] });
    expect(await balanceOf(to)).toBe(parseUnits("12.5", decimals));
    expect(await balanceOf(p.recipientAddress)).toBe(0n);

    const hook = await waitFor(
      async () =>
        receiver.received
          .map((r) => ({ r, body: JSON.parse(r.rawBody) }))
          .find((x) => x.body.paymentId === p.paymentId && x.body.event === "payment.completed"),
      { ...WAIT, what: "payment.completed webhook" },
    );
    expect(hook.r.headers["x-signature"]).toBe(
      createHash("sha256")
        .update(hook.r.rawBody + shop.secret)
        .digest("hex"),
    );
    expect(hook.body).toMatchObject({ paymentId: p.paymentId, status: "completed", amount: "12.5", token, chainId: CHAIN });
  });
});
