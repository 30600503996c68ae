import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createAgent } from "../../../modules/agents/index.js";
import { createMerchant } from "../../../modules/merchants/index.js";
import { allProcessors } from "../../../processors/index.js";
import { startProcessors, type ProcessorRunner } from "../../../processors/runner.js";
import { webhookDispatcher, type WebhookDispatcherProcessor } from "../../../processors/webhook-dispatcher.js";
import { launchBrowser, newPage, screenshot } from "../../helpers/browser.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { startReceiver, type Receiver } from "../../modules/webhooks/helpers/receiver.js";

// The merchant dashboard in a real browser (Debian Chromium, playwright-core) on the test stack with every
// processor: sign up, log in, an API key used from a server, a webhook delivery after a real Anvil payment and
// its resend, then every screen. The webhook dispatcher is given the receiver's self-signed CA (as in
// test/modules/payments/webhooks-e2e.test.ts). Screenshots land in test/output/.

let svc: TestService;
let browser: Browser;
let receiver: Receiver;
let dispatcher: WebhookDispatcherProcessor;
let runner: ProcessorRunner;
let origin: string;
let page: Page;
const errors: string[] = [];
const processorErrors: string[] = [];

beforeAll(async () => {
  [svc, browser, receiver] = await Promise.all([startTestService({ processors: false }), launchBrowser(), startReceiver()]);
  dispatcher = webhookDispatcher({ tls: { ca: receiver.ca }, log: (m) => void processorErrors.push(m) });
  runner = startProcessors(
    svc.deps,
    allProcessors().map((p) => (p.name === dispatcher.name ? dispatcher : p)),
    (m) => void processorErrors.push(m),
  );
  origin = new URL(svc.url).origin;
  const fresh = await newPage(browser);
  page = fresh.page;
  fresh.page.on("pageerror", (e) => errors.push(e.message));
  errors.push(...fresh.errors);
});
afterAll(async () => {
  await runner?.stop();
  await dispatcher?.close();
  await browser?.close();
  await receiver?.close();
  await svc?.stop();
});

const EMAIL = `owner${Date.now()}@shop.example`;
const PASSWORD = "correct horse battery staple";
let apiKey = "";
let paymentId = "";

const go = (path: string) => page.goto(origin + path);
const chain = () => svc.deps.chains.find((c) => c.chainId === 777177)!;
const usdt = () => chain().tokens.find((t) => t.symbol === "USDT")!.address;

describe("merchant dashboard in Chromium", () => {
  it("signs up, logs out and logs back in", async () => {
    await go("/dashboard/signup");
    await screenshot(page, "dashboard-signup");
    await page.getByLabel("Business name").fill("Corner Coffee");
    await page.getByLabel("E-mail").fill(EMAIL);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(`${origin}/dashboard/api-keys`);
    expect(await page.locator("header.top .who").textContent()).toContain("Corner Coffee");

    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL(`${origin}/dashboard/login`);
    // A screen without a session sends the browser to the login form and back after.
    await go("/dashboard/webhooks");
    await page.waitForURL(/\/dashboard\/login\?next=/);
    await page.getByLabel("E-mail").fill(EMAIL);
    await page.getByLabel("Password").fill("wrong password!!");
    await page.getByRole("button", { name: "Log in" }).click();
    await expect.poll(() => page.locator(".notice.error").textContent()).toContain("Invalid email or password");
    await screenshot(page, "dashboard-login-error");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(`${origin}/dashboard/webhooks`);
  });

  it("creates an API key shown once, which a server then uses", async () => {
    await go("/dashboard/api-keys");
    await page.getByLabel(/Name/).fill("shop server");
    await page.getByRole("button", { name: "Create API key" }).click();
    apiKey = await page.getByTestId("new-api-key").inputValue();
    expect(apiKey).toMatch(/^cp_live_/);
    await screenshot(page, "dashboard-api-key-created");
    // What `curl -H "x-api-key: …" {base_url}/balance` does.
    const balance = await fetch(`${svc.url}/balance`, { headers: { "x-api-key": apiKey } });
    expect(balance.status).toBe(200);
    expect(await balance.json()).toMatchObject({ balance: "0.000000" });
    // Shown once: the list shows the prefix only.
    await go("/dashboard/api-keys");
    expect(await page.content()).not.toContain(apiKey);
    expect(await page.getByTestId("api-key-row").count()).toBe(1);
  });

  it("configures a webhook, sees the delivery of a real payment and resends it", { timeout: 180_000 }, async () => {
    await go("/dashboard/webhooks");
    await page.getByRole("textbox", { name: /Endpoint URL/ }).fill(receiver.url);
    await page.getByRole("button", { name: "Create webhook" }).click();
    const secret = await page.getByTestId("webhook-secret").inputValue();
    expect(secret).toMatch(/^whsec_/);
    await screenshot(page, "dashboard-webhook-created");

    const created = await fetch(`${svc.url}/payments`, {
      method: "POST",
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      body: JSON.stringify({
        merchant: privateKeyToAccount(generatePrivateKey()).address,
        chainId: "777177",
        token: usdt(),
        amount: "3.5",
        orderId: "browser-webhook-1",
        gasless: true,
      }),
    });
    expect(created.status).toBe(200);
    paymentId = ((await created.json()) as { url: string }).url.split("/pay/")[1]!;
    const view = (await (await fetch(`${svc.url}/payments/${paymentId}/status`)).json()) as { recipientAddress: Address };
    await chainHelpers(chain()).pay("USDT", view.recipientAddress, 3_500000n);

    // The delivery log shows payment.completed delivered (the page is reloaded as a merchant would).
    const completedRow = () => page.locator('[data-testid="delivery-row"]', { hasText: "payment.completed" });
    await waitFor(
      async () => {
        await go("/dashboard/webhooks");
        return (
          (await completedRow().count()) === 1 && (await completedRow().getByTestId("delivery-status").textContent())?.trim() === "success"
        );
      },
      { timeout: 150_000, interval: 1000, what: "payment.completed delivered in the dashboard log" },
    );
    expect(await completedRow().getByTestId("delivery-attempts").textContent()).toBe("1/3");
    await screenshot(page, "dashboard-webhooks-log");
    const before = receiver.received.filter((r) => JSON.parse(r.rawBody).event === "payment.completed");
    expect(before).toHaveLength(1);

    page.once("dialog", (d) => void d.accept());
    await completedRow().getByRole("button", { name: "Resend" }).click();
    await waitFor(async () => receiver.received.filter((r) => JSON.parse(r.rawBody).event === "payment.completed").length === 2, {
      timeout: 60_000,
      what: "the resent delivery at the receiver",
    });
    const [first, second] = receiver.received.filter((r) => JSON.parse(r.rawBody).event === "payment.completed");
    // The same event (same webhook-id and bytes), delivered again.
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(second!.rawBody).toBe(first!.rawBody);
    await waitFor(
      async () => {
        await go("/dashboard/webhooks");
        return /^2\/\d+$/.test((await completedRow().getByTestId("delivery-attempts").textContent()) ?? "");
      },
      { timeout: 30_000, interval: 500, what: "the resend in the log" },
    );
  });

  it("shows the payment's detail with its timeline and delivery", async () => {
    await go("/dashboard/payments");
    await expect.poll(() => page.getByTestId("payment-status").first().textContent()).toBe("completed");
    await screenshot(page, "dashboard-payments");
    await go(`/dashboard/payments/${paymentId}`);
    const text = (await page.locator("main").textContent()) ?? "";
    expect(text).toContain("browser-webhook-1");
    expect(text).toContain("payment.completed");
    await screenshot(page, "dashboard-payment-detail");
  });

  it("creates a cashier and a terminal, and takes a POS sale to completed on Anvil", { timeout: 240_000 }, async () => {
    // POS sales are in Gas Tank mode: the merchant funds its Gas Tank at the deposit address /balance gives.
    const tank = (await (await fetch(`${svc.url}/balance`, { headers: { "x-api-key": apiKey } })).json()) as {
      depositAddresses: { chainId: number; address: Address }[];
    };
    await chainHelpers(chain()).pay("USDT", tank.depositAddresses.find((d) => d.chainId === 777177)!.address, 20_000000n);
    await waitFor(
      async () => {
        const b = (await (await fetch(`${svc.url}/balance`, { headers: { "x-api-key": apiKey } })).json()) as { balance: string };
        return b.balance === "20.000000";
      },
      { timeout: 120_000, interval: 500, what: "the Gas Tank credited" },
    );

    await go("/dashboard/cashiers");
    await page.getByTestId("cashier-name").fill("Alice");
    await page.getByTestId("cashier-code-input").fill("ALICE");
    await page.getByTestId("cashier-pin-input").fill("20261123");
    await page.getByRole("button", { name: "Create cashier" }).click();
    expect(await page.getByTestId("cashier-row").count()).toBe(1);
    await screenshot(page, "dashboard-cashiers");

    await go("/dashboard/terminals");
    await page.getByTestId("terminal-name").fill("Front counter");
    await page.getByTestId("terminal-code").fill("FRONT");
    await page.getByTestId("terminal-payout").fill(privateKeyToAccount(generatePrivateKey()).address);
    await page.getByTestId("terminal-default-token").selectOption(`777177:${usdt().toLowerCase()}`);
    await page.getByRole("button", { name: "Create terminal" }).click();
    await page.waitForURL(/\/dashboard\/terminals\/[0-9a-f-]{36}\?done=created/);
    const posPath = (await page.getByTestId("terminal-pos-link").first().getAttribute("href"))!;
    await screenshot(page, "dashboard-terminal");
    await go("/dashboard/terminals");
    await screenshot(page, "dashboard-terminals");

    // The POS on a phone-sized, touch screen: PIN on the keypad, amount on the keypad, charge.
    const pos = await newPage(browser, { mobile: true });
    await pos.page.goto(origin + posPath);
    for (const d of "20261123") await pos.page.getByTestId(`pos-key-${d}`).tap();
    await screenshot(pos.page, "pos-pin");
    await pos.page.getByTestId("pos-login").tap();
    await pos.page.getByTestId("pos-amount").waitFor();
    for (const k of ["4", "dot", "2", "5"]) await pos.page.getByTestId(`pos-key-${k}`).tap();
    expect(await pos.page.getByTestId("pos-amount").inputValue()).toBe("4.25");
    await screenshot(pos.page, "pos-amount");
    await pos.page.getByTestId("pos-charge").tap();
    await pos.page.getByTestId("pos-qr").waitFor();
    expect(await pos.page.locator('[data-testid="pos-qr"] svg').count()).toBe(1);
    const saleId = (await pos.page.getByTestId("pos-payment-link").getAttribute("href"))!.split("/pay/")[1]!;
    await screenshot(pos.page, "pos-sale-pending");

    // The API lists it as a terminal payment of this merchant.
    const listed = (await (await fetch(`${svc.url}/v1/payments?limit=5`, { headers: { "x-api-key": apiKey } })).json()) as { data: any[] };
    const sale = listed.data.find((p) => p.paymentId === saleId);
    expect(sale.orderId).toMatch(/^POS-FRONT-ALICE-\d+$/);
    expect(sale.terminal).toMatchObject({ code: "FRONT", name: "Front counter" });
    expect(sale.amount).toBe("4.25");

    await chainHelpers(chain()).pay("USDT", sale.recipientAddress as Address, 4_250000n);
    await pos.page.locator('[data-testid="pos-status"][data-status="completed"]').waitFor({ timeout: 150_000 });
    expect(await pos.page.getByTestId("pos-paid").isVisible()).toBe(true);
    await screenshot(pos.page, "pos-sale-paid");
    expect(pos.errors).toEqual([]);
    await pos.context.close();
  });

  it("shows the Gas Tank, promotion and Vault screens with the merchant's data", async () => {
    await go("/dashboard/gas-tank");
    // 20 USDT deposited, one settlement fee (0.1 USDT processing fee of the POS sale) charged.
    expect(await page.locator("main").textContent()).toContain("19.900000");
    expect(await page.getByTestId("ledger-row").count()).toBe(2);
    expect(await page.locator(".qr svg").count()).toBe(svc.deps.chains.length);
    await screenshot(page, "dashboard-gas-tank");

    await go("/dashboard/promotion");
    // Both completed payments used the promotion (first 30 transactions).
    expect(await page.getByTestId("promo-used").textContent()).toBe("2");
    expect(await page.getByTestId("promo-remaining").textContent()).toBe("28");
    await screenshot(page, "dashboard-promotion");

    await go("/dashboard/vault");
    expect(await page.getByTestId("no-vault").count()).toBe(1);
    const vault = await fetch(`${svc.url}/vault/v1/config`, {
      method: "POST",
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      body: JSON.stringify({
        businessName: "Corner Coffee Rewards",
        walletAddress: privateKeyToAccount(generatePrivateKey()).address,
        enabledTokens: [{ chainId: 777177, token: usdt(), tokenSymbol: "USDT" }],
      }),
    });
    expect(vault.status).toBe(201);
    const user = await fetch(`${svc.url}/vault/v1/users`, {
      method: "POST",
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      body: JSON.stringify({ externalUserId: "player-1", chainId: 777177, tokenAddress: usdt() }),
    });
    expect(user.status).toBe(201);
    const { depositAddress } = ((await user.json()) as { data: { depositAddress: string } }).data;
    await go("/dashboard/vault");
    const vaultLink = page.getByTestId("vault-row").getByRole("link").first();
    if ((await vaultLink.count()) === 1) await vaultLink.click();
    await expect.poll(() => page.getByTestId("vault-user-row").count()).toBe(1);
    expect(await page.getByTestId("vault-user-row").textContent()).toContain(depositAddress);
    await screenshot(page, "dashboard-vault");
    expect(errors).toEqual([]);
  });

  it("shows the Agent screen once the operator makes the account an agent", async () => {
    const { rows } = await svc.deps.db.pool.query(`SELECT id FROM merchants WHERE email = $1`, [EMAIL]);
    const agent = await createAgent(svc.deps.db, rows[0].id, { markupCapBps: 100, platformShareBps: 3000 });
    await createMerchant(svc.deps.db, { name: "Referred Bakery", agentId: agent.agentId });
    await go("/dashboard/agent");
    expect(await page.getByTestId("referral-code").textContent()).toBe(agent.referralCode);
    expect(await page.getByTestId("referred-row").count()).toBe(1);
    await screenshot(page, "dashboard-agent");
    expect(errors).toEqual([]);
  });
});
