import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { PAYMENT_STATUSES } from "../../../modules/payments/index.js";
import { PAYER_STATUS_TEXT } from "../../../web/payer-status.js";
import { launchBrowser, newPage, screenshot } from "../../helpers/browser.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// The payer page in Chromium, at phone size, in the states a payer meets: what it reads is the merchant's business
// name and payer words, never a raw status name ("Status awaiting_gas"); a link past its expiry reads expired from
// the first second (the expiry job has not run: no processors here, the stored status stays `pending`); no expiry on
// a final state; a favicon without a request for /favicon.ico. Statuses are set directly on the rows: this is about
// what the page shows for each, not how a payment gets there.
let svc: TestService;
let browser: Browser;
let merchant: { id: string; apiKey: string };
const BUSINESS = "Corner Café";

beforeAll(async () => {
  [svc, browser] = await Promise.all([startTestService({ processors: false }), launchBrowser()]);
  merchant = await svc.newMerchant({ name: BUSINESS });
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

async function createPayment(): Promise<string> {
  const chain = svc.deps.chains.find((c) => c.chainId === 777177)!;
  const res = await svc.http("POST", "/payments", {
    apiKey: merchant.apiKey,
    body: {
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      chainId: "777177",
      token: chain.tokens.find((t) => t.symbol === "USDT")!.address,
      amount: "12.5",
      orderId: `status-${Math.random().toString(36).slice(2)}`,
      description: "Two coffees",
      gasless: true,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.paymentId ?? (res.body.url as string).split("/pay/")[1]!;
}

/** A payment in `status` (the full amount received past `pending`); `expired: true` puts a pending one past expiresAt. */
async function paymentIn(status: string, opts: { expired?: boolean; confirmations?: number } = {}): Promise<string> {
  const id = await createPayment();
  // A payment waiting for its confirmations has nothing counted yet (receivedAmount counts at depth only).
  const received = ["pending", "expired", "cancelled", "waiting_for_confirmation"].includes(status) ? "0" : "due_units";
  await svc.deps.db.pool.query(
    `UPDATE payments SET status = $2, received_units = ${received}, block_confirmations = $3,
       expires_at = CASE WHEN $4 THEN now() - interval '1 second' ELSE expires_at END WHERE id = $1`,
    [id, status, opts.confirmations ?? 1, Boolean(opts.expired)],
  );
  return id;
}

const SNAKE = PAYMENT_STATUSES.filter((s) => s.includes("_"));

type Case = { name: string; status: string; badge: string; line?: string; expired?: boolean; confirmations?: number; progress?: boolean };

describe("payer page states in Chromium (phone)", () => {
  const cases: Case[] = [
    {
      name: "awaiting_gas",
      status: "awaiting_gas",
      badge: PAYER_STATUS_TEXT.awaiting_gas.label,
      line: PAYER_STATUS_TEXT.awaiting_gas.explanation,
    },
    { name: "confirming", status: "waiting_for_confirmation", confirmations: 3, badge: "Confirming 1 of 3", progress: true },
    { name: "settling", status: "deploying_wallet", badge: PAYER_STATUS_TEXT.deploying_wallet.label },
    { name: "completed", status: "completed", badge: "Paid", line: "Payment complete. Thank you!" },
    // Stored `pending`, past expiresAt: the job that marks it expired has not run.
    {
      name: "expired",
      status: "pending",
      expired: true,
      badge: PAYER_STATUS_TEXT.expired.label,
      line: PAYER_STATUS_TEXT.expired.explanation,
    },
    { name: "expired-stored", status: "expired", badge: PAYER_STATUS_TEXT.expired.label },
    { name: "cancelled", status: "cancelled", badge: PAYER_STATUS_TEXT.cancelled.label, line: PAYER_STATUS_TEXT.cancelled.explanation },
  ];

  for (const c of cases)
    it(`${c.name}: payer words and the business name, no raw status, no expiry once final`, { timeout: 60_000 }, async () => {
      const id = await paymentIn(c.status, c);
      const { context, page, errors } = await newPage(browser, { mobile: true });
      const asked: string[] = [];
      page.on("request", (r) => asked.push(new URL(r.url()).pathname));
      await page.goto(`${new URL(svc.url).origin}/pay/${id}`);
      await expect.poll(() => page.locator("#badge").textContent()).toBe(c.badge);
      // One poll of the status route, so the script's own render is what is checked too (a completed page stops polling).
      if (c.status !== "completed") {
        await page.waitForResponse((r) => r.url().includes(`/api/payments/${id}/status`), { timeout: 10_000 });
        await expect.poll(() => page.locator("#badge").textContent()).toBe(c.badge);
      }

      const text = await page.locator("body").innerText();
      for (const raw of SNAKE) expect(text, `${c.name}: ${raw}`).not.toContain(raw);
      expect(text, c.name).not.toMatch(new RegExp(`status:?\\s+(${PAYMENT_STATUSES.join("|")})\\b`, "i"));
      expect(await page.locator("#merchant-name").innerText()).toBe(BUSINESS);
      expect(await page.title()).toContain(`to ${BUSINESS}`);
      if (c.line) expect(text).toContain(c.line);
      // "Expires in" only while the link can be paid: none of these states.
      expect(await page.locator("#expiry").isVisible()).toBe(false);
      expect(text).not.toContain("Expires in");
      expect(text).not.toContain("Remaining");
      expect(await page.locator("#confirm-progress").isVisible()).toBe(Boolean(c.progress));
      if (c.progress) {
        expect(await page.locator("#confirm-progress").getAttribute("max")).toBe("3");
        expect(await page.locator("#confirm-progress").evaluate((e) => (e as unknown as { value: number }).value)).toBe(1);
      }
      expect(await page.locator("#pay").isVisible()).toBe(false);
      // The icon is in the page: Chromium does not ask the origin for one.
      expect(await page.locator('link[rel="icon"]').getAttribute("href")).toMatch(/^data:image\/svg\+xml,/);
      expect(asked.filter((p) => p === "/favicon.ico")).toEqual([]);

      if (["awaiting_gas", "confirming", "completed", "expired", "cancelled"].includes(c.name))
        await screenshot(page, `pay-page-${c.name}-phone`);
      expect(errors).toEqual([]);
      await context.close();
    });

  it("an open link: the countdown and the business name; the public status route says expired once past expiresAt", async () => {
    const id = await paymentIn("pending");
    const { context, page, errors } = await newPage(browser, { mobile: true });
    await page.goto(`${new URL(svc.url).origin}/pay/${id}`);
    await expect.poll(() => page.locator("#badge").textContent()).toBe(PAYER_STATUS_TEXT.pending.label);
    expect(await page.locator("#expiry").isVisible()).toBe(true);
    expect(await page.locator("#countdown").innerText()).toMatch(/^\d\d:\d\d:\d\d$/);
    expect(await page.locator("#merchant-name").innerText()).toBe(BUSINESS);
    expect(errors).toEqual([]);
    await context.close();

    const late = await paymentIn("pending", { expired: true });
    const view = await svc.http("GET", `/payments/${late}/status`);
    expect(view.body).toMatchObject({ status: "pending", stage: "expired", merchantName: BUSINESS });
  });
});
