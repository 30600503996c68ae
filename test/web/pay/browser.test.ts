import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Address } from "viem";
import { launchBrowser, newPage, screenshot } from "../../helpers/browser.js";
import { chainHelpers } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// The payer page in a real browser (Debian Chromium through playwright-core): from creation through a real
// payment on Anvil to completion, then the redirect to the merchant, whose hash GET /payments/verify accepts.
let svc: TestService;
let browser: Browser;
beforeAll(async () => {
  [svc, browser] = await Promise.all([startTestService(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

describe("payer page in Chromium", () => {
  it("shows the payment, follows it to completed and redirects with a hash verify accepts", { timeout: 180_000 }, async () => {
    const merchant = await svc.newMerchant();
    const chain = svc.deps.chains.find((c) => c.chainId === 777177)!;
    const res = await svc.http("POST", "/payments", {
      apiKey: merchant.apiKey,
      body: {
        merchant: privateKeyToAccount(generatePrivateKey()).address,
        chainId: "777177",
        token: chain.tokens.find((t) => t.symbol === "USDT")!.address,
        amount: "12.5",
        orderId: "browser-order-1",
        description: "Two coffees",
        redirectUrl: "https://shop.example/return",
        gasless: true,
      },
    });
    expect(res.status).toBe(200);
    const paymentId = (res.body.url as string).split("/pay/")[1]!;
    // APP_URL of the test deps names no port; the service listens on a free one.
    const url = `${new URL(svc.url).origin}/pay/${paymentId}`;

    const { context, page, errors } = await newPage(browser, { mobile: true });
    // The merchant's site is not reachable from here: the browser gets a stand-in page for it.
    await context.route("https://shop.example/**", (route) =>
      route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>Shop</title><h1>Thanks</h1>" }),
    );
    await page.goto(url);
    await expect.poll(() => page.locator("#amount-due").textContent()).toBe("12.5");
    expect(await page.locator("#qr svg").count()).toBe(1);
    expect(await page.locator("#recipient").textContent()).toMatch(/^0x[0-9a-fA-F]{40}$/);
    const recipient = (await page.locator("#recipient").textContent()) as Address;
    await screenshot(page, "pay-page-pending");

    await chainHelpers(chain).pay("USDT", recipient, 12_500000n);
    // The page's own polling shows the success state, then sends the payer back to the merchant.
    await page.waitForURL(/^https:\/\/shop\.example\/return\?/, { timeout: 150_000 });
    const back = new URL(page.url());
    expect(back.searchParams.get("service")).toBe(paymentId);
    expect(back.searchParams.get("success")).toBe("true");
    const hash = back.searchParams.get("hash")!;
    const verify = await svc.http("GET", `/payments/verify?id=${paymentId}&hash=${hash}`);
    expect(verify.status).toBe(200);
    expect(verify.body).toMatchObject({ valid: true, verified: true, payment: { paymentId, status: "completed", receivedAmount: "12.5" } });
    // A tampered hash is refused.
    const forged = await svc.http("GET", `/payments/verify?id=${paymentId}&hash=${hash.replace(/^./, hash[0] === "0" ? "1" : "0")}`);
    expect(forged.body.verified).not.toBe(true);

    // Back on the payer page: the completed state, as a payer returning to the link sees it.
    await page.goto(url);
    await expect.poll(() => page.locator("#badge").textContent()).toBe("Paid");
    await screenshot(page, "pay-page-completed");
    expect(errors).toEqual([]);
    await context.close();
  });
});
