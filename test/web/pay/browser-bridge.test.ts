import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeFunctionData, erc20Abi, getAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { quoteExactOut } from "../../../local/bridge/quote.js";
import { launchBrowser, newPage, screenshot } from "../../helpers/browser.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { injectWallet, TEST_WALLET_INFO } from "../../helpers/injected-wallet.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Cross-chain payment from the payer page in Chromium: a payment on chain 777177 in USDT, paid with USDC on chain 137
// by a browser wallet (test/helpers/injected-wallet.ts, found through EIP-6963) through the DLN stand-in and its solver
// (local/bridge/, started by the test stack). The page quotes, approves, sends the order, reports it, and follows the
// order and the payment to completed; the merchant receives exactly the requested amount.
let svc: TestService;
let browser: Browser;
beforeAll(async () => {
  [svc, browser] = await Promise.all([startTestService(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

const chainOf = (id: number) => svc.deps.chains.find((c) => c.chainId === id)!;
const ONE = 10n ** 18n;

/** Records every value the bridge section's `data-stage` takes (installed before the payer clicks). */
async function recordStages(page: Page) {
  await page.evaluate(() => {
    const g = globalThis as unknown as { document: any; MutationObserver: any; __stages: string[] };
    const el = g.document.getElementById("bridge");
    g.__stages = [el.getAttribute("data-stage")];
    new g.MutationObserver(() => g.__stages.push(el.getAttribute("data-stage"))).observe(el, {
      attributes: true,
      attributeFilter: ["data-stage"],
    });
  });
  return async () => {
    const all = await page.evaluate(() => (globalThis as unknown as { __stages: string[] }).__stages);
    return all.filter((s, i) => s !== all[i - 1]);
  };
}

/** A payment on chain 777177 (the merchant's payout is a fresh address); its id and first public view. */
async function createPayment(body: Record<string, unknown>) {
  const merchant = await svc.newMerchant();
  const payout = privateKeyToAccount(generatePrivateKey()).address;
  const res = await svc.http("POST", "/payments", { apiKey: merchant.apiKey, body: { merchant: payout, chainId: "777177", ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const paymentId = (res.body.url as string).split("/pay/")[1]!;
  const { body: view } = await svc.http("GET", `/payments/${paymentId}/status`);
  return { paymentId, payout, view };
}

/** The payer page in a phone-sized context with the Test Wallet (starting on 777177) for `payer`. */
async function openPage(paymentId: string, payer: PrivateKeyAccount) {
  const { context, page, errors } = await newPage(browser, { mobile: true });
  const failed: string[] = [];
  const favicon: string[] = [];
  page.on("response", (r) => void (r.status() >= 400 && failed.push(`${r.status()} ${r.request().method()} ${r.url()}`)));
  // Chromium asks the origin for /favicon.ico (the app has none): its 404 is logged as a console error.
  page.on("console", (m) => void (m.type() === "error" && /\/favicon\.ico$/.test(m.location().url) && favicon.push(m.text())));
  const wallet = await injectWallet(page, { account: payer, chains: svc.deps.chains, chainId: 777177 });
  await page.goto(`${new URL(svc.url).origin}/pay/${paymentId}`);
  await page.locator("#bridge").waitFor({ state: "visible" });
  return {
    context,
    page,
    wallet,
    /** Console errors but the favicon's 404 and a report retried before the provider indexed the transaction (409). */
    expectNoErrors: () =>
      expect(
        errors.filter((e) => !favicon.includes(e.replace(/^console: /, "")) && !/status of 409/.test(e)),
        failed.join("\n"),
      ).toEqual([]),
  };
}

/** Connects the Test Wallet and picks USDC on 137; the quote is shown. */
async function connectAndQuote(page: Page) {
  const button = page.locator(`[data-testid="bridge-wallet"][data-rdns="${TEST_WALLET_INFO.rdns}"]`);
  await expect.poll(() => button.textContent()).toBe("Test Wallet");
  await button.click();
  await page.locator("#bridge-pick").waitFor({ state: "visible" });
  await page.selectOption("#bridge-source", `137:${chainHelpers(chainOf(137)).token("USDC").address.toLowerCase()}`);
  await page.locator("#bridge-quote").waitFor({ state: "visible" });
}

describe("payer page: pay from another network through the bridge", () => {
  it(
    "USDC on 137 pays a USDT payment on 777177: quote, approve, order, fill, completed; the merchant gets the exact amount",
    { timeout: 300_000 },
    async () => {
      expect(svc.deps.config.BRIDGE_API_URL, "the test stack runs the DLN stand-in").toMatch(/^http:\/\//);
      const src = chainOf(137);
      const srcH = chainHelpers(src);
      const dstH = chainHelpers(chainOf(777177));
      const usdc = srcH.token("USDC");
      const {
        paymentId,
        payout,
        view: v0,
      } = await createPayment({
        token: dstH.token("USDT").address,
        amount: "7.25",
        orderId: "bridge-order-1",
        description: "Cross-chain coffee",
        payerCoversFee: true,
      });
      expect(v0).toMatchObject({ amount: "7.25", amountDue: "7.35", status: "pending" });

      // The payer: native coin for gas and 100 USDC on chain 137, nothing on 777177.
      const payer = await srcH.newPayer();
      await srcH.mint("USDC", payer.address, 100_000000n, payer);

      const { context, page, wallet, expectNoErrors } = await openPage(paymentId, payer);
      const button = page.locator(`[data-testid="bridge-wallet"][data-rdns="${TEST_WALLET_INFO.rdns}"]`);
      await expect.poll(() => button.textContent()).toBe("Test Wallet");
      expect(await button.locator("img").getAttribute("src")).toBe(TEST_WALLET_INFO.icon);
      await button.click();

      // Connected; the page switched the wallet to 137 and kept only the tokens it holds there (no USDT0).
      await page.locator("#bridge-pick").waitFor({ state: "visible" });
      expect(await page.locator("#bridge-account").textContent()).toBe(
        `Connected ${payer.address.slice(0, 6)}\u2026${payer.address.slice(-4)} (Test Wallet)`,
      );
      const options = await page.locator("#bridge-source option").allTextContents();
      expect(options[0]).toBe("Choose a token\u2026");
      expect(options[1]).toBe("USDC on Polygon (balance 100)");
      expect(options[2]).toMatch(/^MATIC on Polygon \(balance 99999\d\.\d+\)$/);
      expect(options).toHaveLength(3);
      expect(wallet.requests.filter((r) => r.method === "wallet_switchEthereumChain").map((r) => r.params)).toEqual([
        [{ chainId: "0x89" }],
      ]);
      expect(wallet.chainId()).toBe(137);

      // The quote: what the recipient must still get (7.35 USDT), exactly; the payer gives that at 1:1 plus the
      // stand-in's 0.3 % margin and 0.10 USD operating expense, rounded up.
      await page.selectOption("#bridge-source", `137:${usdc.address.toLowerCase()}`);
      await page.locator("#bridge-quote").waitFor({ state: "visible" });
      const q = quoteExactOut(7_350_000n, { decimals: 6, price18: ONE }, { decimals: 6, price18: ONE });
      expect(q.amountIn).toBe(7_472_050n);
      expect(await page.locator('[data-testid="quote-in"]').textContent()).toBe("7.47205 USDC on Polygon");
      expect(await page.locator('[data-testid="quote-out"]').textContent()).toBe("7.35 USDT on Service Chain Testnet");
      expect(await page.locator('[data-testid="quote-fees"]').textContent()).toBe("0.12205 USDC, network cost of 0.1 USDC included");
      expect(await page.locator('[data-testid="quote-eta"]').textContent()).toMatch(/^about \d+ s after your transaction$/);
      expect(await page.locator("#bridge-pay").textContent()).toBe("Approve and pay");
      expect(await page.locator("#bridge-pay").isEnabled()).toBe(true);
      await screenshot(page, "pay-bridge-quote");

      const stages = await recordStages(page);
      const t0 = Date.now();
      await page.locator("#bridge-pay").click();
      await page.locator('#bridge[data-stage="completed"]').waitFor({ timeout: 240_000 });
      const took = Date.now() - t0;
      await expect.poll(() => page.locator("#badge").textContent()).toBe("Paid");
      // The service chain settles in a second or two: the page may see the payment completed without the `delivered`
      // stage in between (its polls are 2 s apart); the list then shows every stage done.
      const seen = await stages();
      console.log(`[pay-cross-chain] stages seen: ${seen.join(" -> ")}`);
      expect(seen.filter((st) => st !== "delivered")).toEqual(["", "approving", "sending", "bridging", "completed"]);
      expect(seen.length).toBeLessThanOrEqual(6);
      expect(await page.locator("#bridge-stages li.done").count()).toBe(5);
      expect(await page.locator("#bridge-msg").textContent()).toBe("Paid through the bridge: the merchant received the full amount.");
      expect(await page.locator("#pay").isHidden()).toBe(true);

      // The wallet sent two transactions on 137: approve(BridgeSource, amount in), then the order to BridgeSource.
      expect(wallet.sent.map((t) => [t.chainId, getAddress(t.to)])).toEqual([
        [137, usdc.address],
        [137, src.bridgeSource],
      ]);
      const approve = decodeFunctionData({ abi: erc20Abi, data: wallet.sent[0]!.data });
      expect(approve).toEqual({ functionName: "approve", args: [src.bridgeSource, 7_472_050n] });
      expect(wallet.sent[1]!.value).toBe(0n);

      // Exact amounts: the payer gave the quoted amount, the merchant received exactly what was requested.
      expect(await srcH.balanceOf("USDC", payer.address)).toBe(100_000000n - 7_472_050n);
      expect(await dstH.balanceOf("USDT", payout as Address)).toBe(7_250_000n);
      const { body: done } = await svc.http("GET", `/payments/${paymentId}/status`);
      expect(done).toMatchObject({ status: "completed", receivedAmount: "7.35", remainingAmount: "0" });

      // The order was recorded from the reported transaction, and the payment got its 15 more minutes.
      const orders = await svc.http("GET", `/payments/${paymentId}/bridge/orders`);
      expect(orders.status).toBe(200);
      expect(orders.body.expiresAt).toBe(v0.expiresAt + 15 * 60_000);
      expect(orders.body.orders).toHaveLength(1);
      expect(orders.body.orders[0]).toMatchObject({
        srcChainId: 137,
        srcUnits: "7472050",
        dstChainId: 777177,
        takeUnits: "7350000",
        createTxHash: wallet.sent[1]!.hash.toLowerCase(),
      });
      // The bridge-orders processor follows the provider on its own pace (BRIDGE_POLL_INTERVAL_MS): it catches up.
      await waitFor(
        async () => {
          const { body } = await svc.http("GET", `/payments/${paymentId}/bridge/orders`);
          return ["fulfilled", "claimed_unlock"].includes(body.orders[0].status);
        },
        { timeout: 60_000, interval: 500, what: "the order fulfilled at the provider" },
      );

      console.log(`[pay-cross-chain] Pay click -> page shows completed: ${took} ms`);
      await screenshot(page, "pay-bridge-completed");
      expectNoErrors();
      await context.close();
    },
  );

  it(
    "an order no solver fills is cancelled after 5 minutes (test clock): the payer is refunded and may pay again",
    { timeout: 300_000 },
    async () => {
      const srcH = chainHelpers(chainOf(137));
      const dstH = chainHelpers(chainOf(777177));
      const { paymentId, view: v0 } = await createPayment({ token: dstH.token("USDC").address, amount: "3", orderId: "bridge-order-2" });
      // The stand-in's solver leaves orders to this recipient unfilled (POST /local/solver/skip/{receiver}).
      const skipUrl = `${svc.deps.config.BRIDGE_API_URL}/local/solver/skip/${v0.recipientAddress}`;
      expect((await fetch(skipUrl, { method: "POST" })).status).toBe(204);
      try {
        const payer = await srcH.newPayer();
        await srcH.mint("USDC", payer.address, 50_000000n, payer);
        const { context, page, expectNoErrors } = await openPage(paymentId, payer);
        await connectAndQuote(page);
        // 3 USDC at 1:1 + 0.3 % + 0.10 = 3.109 USDC.
        expect(await page.locator('[data-testid="quote-in"]').textContent()).toBe("3.109 USDC on Polygon");
        await page.locator("#bridge-pay").click();
        await page.locator('#bridge[data-stage="bridging"]').waitFor({ timeout: 60_000 });
        expect(await page.locator("#pay").isHidden()).toBe(true);
        await waitFor(async () => (await svc.http("GET", `/payments/${paymentId}/bridge/orders`)).body.orders[0]?.status === "created", {
          timeout: 60_000,
          interval: 250,
          what: "the order reported",
        });
        expect(await srcH.balanceOf("USDC", payer.address)).toBe(50_000000n - 3_109_000n);

        // Five minutes later (the service's clock) the service cancels it; the solver relays the cancel to the source.
        svc.clock.advance(5 * 60_000 + 1_000);
        await expect
          .poll(() => page.locator("#bridge-msg").textContent(), { timeout: 150_000, interval: 500 })
          .toBe("The bridge did not fill your order. It was cancelled and 3.109 USDC were returned to your wallet on Polygon.");
        expect(await page.locator("#bridge").getAttribute("data-stage")).toBe("bridging-failed");
        expect(await page.locator('#bridge-stages li[data-stage="bridging"]').getAttribute("class")).toBe("failed");
        expect(await srcH.balanceOf("USDC", payer.address)).toBe(50_000000n);
        const { body } = await svc.http("GET", `/payments/${paymentId}/bridge/orders`);
        expect(body.orders.map((o: any) => o.status)).toEqual(["cancelled"]);
        expect(body.expiresAt).toBe(v0.expiresAt + 15 * 60_000);

        // The payment is still open: the address and the bridge choices are back.
        const { body: v1 } = await svc.http("GET", `/payments/${paymentId}/status`);
        expect(v1).toMatchObject({ status: "pending", receivedAmount: "0" });
        await expect.poll(() => page.locator("#pay").isVisible()).toBe(true);
        expect(await page.locator("#bridge-pick").isVisible()).toBe(true);
        expect(await page.locator("#bridge-source").inputValue()).toBe("");
        await screenshot(page, "pay-bridge-cancelled");
        expectNoErrors();
        await context.close();
      } finally {
        await fetch(skipUrl, { method: "DELETE" });
      }
    },
  );
});
