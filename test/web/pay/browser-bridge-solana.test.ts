import { randomUUID } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { SOLANA } from "../../../chains/solana.js";
import { formatAmount } from "../../../core/money.js";
import { localSolanaKey } from "../../../local/solana/accounts.js";
import { launchBrowser, newPage, screenshot } from "../../helpers/browser.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { injectSolanaWallet } from "../../helpers/solana-wallet.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// A payer on Solana pays a payment on chain 777177 from the payer page in Chromium: a Wallet Standard wallet
// (test/helpers/solana-wallet.ts; it signs in Node and sends to the stack's local Solana, a litesvm stand-in) is found
// by the page, connected, its USDC read through the service (…/bridge/holdings), DLN's Solana transaction (from the
// stand-in, blockhash refreshed by the service) signed and sent, the signature reported; the stand-in's solver fills on
// 777177. An order nobody fills is cancelled 5 minutes later (test clock) and the payer's USDC comes back.
let svc: TestService;
let browser: Browser;
beforeAll(async () => {
  [svc, browser] = await Promise.all([startTestService(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

const dst = () => chainHelpers(svc.deps.chains.find((c) => c.chainId === 777177)!);
const rpcUrl = () => svc.deps.config.SOLANA_RPC_URL!;

/** One JSON-RPC call to the local Solana front. */
async function solana<T>(method: string, params: unknown[]): Promise<T> {
  const res = await fetch(rpcUrl(), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** A fresh payer on Solana with 1 SOL for fees and `usdc` units of USDC. */
async function solanaPayer(usdc: bigint) {
  const key = localSolanaKey(`browser-payer-${randomUUID()}`);
  await solana("requestAirdrop", [key.address, 1_000_000_000]);
  await solana("local_mintTo", [SOLANA.usdc.mint, key.address, usdc.toString()]);
  return key;
}

/** What an owner holds of USDC on Solana (the local front; the holdings route answers open payments only). */
async function usdcOf(owner: string): Promise<bigint> {
  type Accounts = { value: { account: { data: { parsed: { info: { tokenAmount: { amount: string } } } } } }[] };
  const r = await solana<Accounts>("getTokenAccountsByOwner", [owner, { mint: SOLANA.usdc.mint }, { encoding: "jsonParsed" }]);
  return r.value.reduce((sum, a) => sum + BigInt(a.account.data.parsed.info.tokenAmount.amount), 0n);
}

async function createPayment(amount: string) {
  const merchant = await svc.newMerchant();
  const payout = privateKeyToAccount(generatePrivateKey()).address;
  const res = await svc.http("POST", "/payments", {
    apiKey: merchant.apiKey,
    // The payer covers the fees: a new merchant's Gas Tank is empty.
    body: {
      merchant: payout,
      chainId: "777177",
      token: dst().token("USDT").address,
      amount,
      orderId: `sol-${randomUUID()}`,
      payerCoversFee: true,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const paymentId = (res.body.url as string).split("/pay/")[1]!;
  const { rows } = await svc.deps.db.pool.query(`SELECT recipient_address FROM payments WHERE id = $1`, [paymentId]);
  const { body: view } = await svc.http("GET", `/payments/${paymentId}/status`);
  return { paymentId, payout, recipient: rows[0].recipient_address as Address, amountDue: view.amountDue as string };
}

/** Records every value the bridge section's `data-stage` takes. */
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

/** The payer page with the Test Solana Wallet; connects it and picks USDC on Solana: the quote is shown. */
async function openAndQuote(paymentId: string, key: ReturnType<typeof localSolanaKey>) {
  const { context, page, errors } = await newPage(browser, { mobile: true });
  // Failed responses but the favicon (the app has none) and reports made before the provider indexed the order (409).
  const failed: string[] = [];
  page.on("response", (r) => {
    if (r.status() >= 400 && !/\/favicon\.ico$/.test(r.url()) && r.status() !== 409)
      failed.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  const wallet = await injectSolanaWallet(page, { secretKey: key.secretKey, rpcUrl: rpcUrl() });
  await page.goto(`${new URL(svc.url).origin}/pay/${paymentId}`);
  await page.locator("#bridge").waitFor({ state: "visible" });
  const button = page.locator('[data-testid="bridge-wallet"][data-kind="solana"]');
  await expect.poll(() => button.textContent()).toBe("Test Solana Wallet (Solana)");
  await button.click();
  await page.locator("#bridge-pick").waitFor({ state: "visible" });
  expect(await page.locator("#bridge-account").textContent()).toBe(
    `Connected ${key.address.slice(0, 6)}\u2026${key.address.slice(-4)} (Test Solana Wallet)`,
  );
  await page.selectOption("#bridge-source", `7565164:${SOLANA.usdc.mint}`);
  await page.locator("#bridge-quote").waitFor({ state: "visible" });
  return { context, page, wallet, errors, failed };
}

describe("payer page: pay from Solana through the bridge", () => {
  it(
    "Solana USDC pays a USDT payment on 777177: quote, sign and send, bridging, completed; the merchant gets the exact amount",
    { timeout: 300_000 },
    async () => {
      const { paymentId, payout, amountDue } = await createPayment("6.5");
      const key = await solanaPayer(50_000_000n);
      const { context, page, wallet, errors, failed } = await openAndQuote(paymentId, key);
      try {
        const options = await page.locator("#bridge-source option").allTextContents();
        expect(options).toEqual(["Choose a token\u2026", "USDC on Solana (balance 50)"]);
        const quoteIn = await page.locator('[data-testid="quote-in"]').textContent();
        expect(quoteIn).toMatch(/^6\.\d+ USDC on Solana$/);
        expect(await page.locator('[data-testid="quote-out"]').textContent()).toBe(`${amountDue} USDT on Service Chain Testnet`);
        // DLN's creation fee on Solana is in lamports (0.015 SOL); nothing to approve there.
        expect(await page.locator('[data-testid="quote-protocol-fee"]').textContent()).toBe("0.015 SOL");
        expect(await page.locator("#bridge-pay").textContent()).toBe("Pay");
        await screenshot(page, "pay-bridge-solana-quote");

        const stages = await recordStages(page);
        await page.locator("#bridge-pay").click();
        await page.locator('#bridge[data-stage="completed"]').waitFor({ timeout: 240_000 });
        await expect.poll(() => page.locator("#badge").textContent()).toBe("Paid");
        const seen = (await stages()).filter((s) => s !== "delivered");
        expect(seen).toEqual(["", "sending", "bridging", "completed"]);
        expect(await page.locator("#bridge-msg").textContent()).toBe("Paid through the bridge: the merchant received the full amount.");
        expect(await page.locator('#bridge-stages li[data-stage="approving"]').isHidden()).toBe(true);
        expect(await page.locator("#bridge-stages li.done:visible").count()).toBe(4);
        await screenshot(page, "pay-bridge-solana-completed");

        // One transaction signed and sent by the wallet; the order the service recorded is the one it created.
        expect(wallet.sent).toHaveLength(1);
        const { body } = await svc.http("GET", `/payments/${paymentId}/bridge/orders`);
        expect(body.orders).toHaveLength(1);
        expect(body.orders[0]).toMatchObject({
          srcChainId: 7565164,
          srcToken: SOLANA.usdc.mint,
          payer: key.address,
          createTxHash: wallet.sent[0],
        });
        const paid = BigInt(body.orders[0].srcUnits);
        expect(`${formatAmount(paid, 6)} USDC on Solana`).toBe(quoteIn);
        // Exact amounts: the payer gave the quote, the merchant got exactly the payment's amount.
        expect(await usdcOf(key.address)).toBe(50_000_000n - paid);
        await waitFor(async () => (await dst().balanceOf("USDT", payout)) === 6_500_000n, {
          timeout: 120_000,
          what: "settled to the merchant",
        });
        expect(failed).toEqual([]);
        expect(errors.filter((e) => !/status of (404|409)/.test(e))).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );

  it(
    "an unfilled Solana order is cancelled 5 minutes later (test clock): the page says so and the payer's USDC is back exactly",
    { timeout: 300_000 },
    async () => {
      const { paymentId, recipient } = await createPayment("2");
      const key = await solanaPayer(10_000_000n);
      const skip = `${svc.deps.config.BRIDGE_API_URL}/local/solver/skip/${recipient}`;
      expect((await fetch(skip, { method: "POST" })).status).toBe(204);
      const { context, page } = await openAndQuote(paymentId, key);
      try {
        await page.locator("#bridge-pay").click();
        await page.locator('#bridge[data-stage="bridging"]').waitFor({ timeout: 60_000 });
        await waitFor(async () => (await svc.http("GET", `/payments/${paymentId}/bridge/orders`)).body.orders[0]?.status === "created", {
          timeout: 60_000,
          interval: 250,
          what: "the order reported",
        });
        const { body } = await svc.http("GET", `/payments/${paymentId}/bridge/orders`);
        const paid = BigInt(body.orders[0].srcUnits);
        expect(await usdcOf(key.address)).toBe(10_000_000n - paid);

        svc.clock.advance(5 * 60_000 + 1_000);
        const amount = formatAmount(paid, 6);
        await expect
          .poll(() => page.locator("#bridge-msg").textContent(), { timeout: 150_000, interval: 500 })
          .toMatch(
            new RegExp(
              `^The bridge did not fill your order\\. It was cancelled and ${amount.replace(".", "\\.")} USDC( and the [0-9.]+ SOL bridge fee)? were returned to your wallet on Solana\\.$`,
            ),
          );
        expect(await usdcOf(key.address)).toBe(10_000_000n);
        const after = await svc.http("GET", `/payments/${paymentId}/bridge/orders`);
        expect(after.body.orders[0]).toMatchObject({
          status: "cancelled",
          refund: { token: SOLANA.usdc.mint, units: String(paid), to: key.address },
        });
        await screenshot(page, "pay-bridge-solana-cancelled");
      } finally {
        await fetch(skip, { method: "DELETE" });
        await context.close();
      }
    },
  );
});
