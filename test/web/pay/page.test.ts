import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseUnits, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// The payer page and its public status route, through HTTP, on the real test stack.
let svc: TestService;
let merchant: { id: string; apiKey: string };
let origin: string;
beforeAll(async () => {
  svc = await startTestService();
  merchant = await svc.newMerchant();
  origin = new URL(svc.url).origin;
});
afterAll(() => svc?.stop());

const chainOf = (id: number) => svc.deps.chains.find((c) => c.chainId === id)!;
const usdt = () => chainOf(777177).tokens.find((t) => t.symbol === "USDT")!.address;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;

async function create(body: Record<string, unknown> = {}) {
  const res = await svc.http("POST", "/payments", {
    apiKey: merchant.apiKey,
    body: {
      merchant: payout(),
      chainId: "777177",
      token: usdt(),
      amount: "5",
      orderId: `order-${Math.random()}`,
      redirectUrl: "https://shop.example/return",
      ...body,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const url = res.body.url as string;
  const id = url.split("/pay/")[1]!;
  expect(url).toBe(`${svc.deps.config.appUrl}/pay/${id}`);
  return id;
}
const page = (id: string) => fetch(`${origin}/pay/${id}`);
const status = (id: string) => svc.http("GET", `/payments/${id}/status`);

describe("GET /pay/:paymentId", () => {
  it("renders amount, token, network, recipient, an inline SVG QR, and escapes merchant text", async () => {
    const id = await create({ orderId: 'ord<&>"1', description: `<script>alert("x")</script> & co` });
    const { body: v } = await status(id);
    const res = await page(id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'nonce-");
    const html = await res.text();
    expect(html).toContain('<span id="amount-due">5</span> <small>USDT</small>');
    expect(html).toContain("Service Chain Testnet");
    expect(html).toContain(`<code id="recipient">${v.recipientAddress}</code>`);
    expect(html).toContain('data-copy="recipient"');
    expect(html).toMatch(/<div id="qr"[^>]*><svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(html).toContain(`href="${v.paymentUri.replace(/&/g, "&amp;")}"`);
    expect(html).toContain('id="countdown"');
    // Merchant-provided text is escaped in the markup and in the embedded state.
    expect(html).not.toContain("<script>alert");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co");
    expect(html).toContain("Order ord&lt;&amp;&gt;&quot;1");
    expect(html).toContain("\\u003cscript\\u003ealert");
    // Nothing merchant-internal.
    expect(html).not.toContain(merchant.id);
    expect(html).not.toContain(merchant.apiKey);
  });

  it("payer-covers-fee: the page asks for the amount plus fees", async () => {
    const id = await create({ payerCoversFee: true });
    const { body: v } = await status(id);
    expect(v.amount).toBe("5");
    expect(v.amountDue).toBe("5.1");
    expect(v.paymentUri.endsWith("&uint256=5100000")).toBe(true);
    const html = await (await page(id)).text();
    expect(html).toContain('<span id="amount-due">5.1</span>');
    expect(html).toContain("Includes 0.1 USDT of fees");
  });

  it("404 HTML for an unknown or malformed id", async () => {
    for (const id of ["0b8e2c1e-4a57-4f7e-9a61-3c2d1e0f9a8b", "not-a-uuid", "%3Cscript%3E"]) {
      const res = await page(id);
      expect(res.status, id).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const html = await res.text();
      expect(html).toContain("Payment not found");
      expect(html).not.toContain("<script>");
    }
  });

  it("QR image route: SVG of the payment URI", async () => {
    const id = await create();
    const res = await fetch(`${origin}/pay/${id}/qr.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    expect((await res.text()).startsWith("<svg")).toBe(true);
    expect((await fetch(`${origin}/pay/not-a-uuid/qr.svg`)).status).toBe(404);
  });
});

describe("GET /api/payments/:paymentId/status", () => {
  it("returns the public view with typed fields and no-store", async () => {
    const id = await create({ description: "Two coffees" });
    const res = await status(id);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const v = res.body;
    expect(Object.keys(v).sort()).toEqual(
      [
        "amount",
        "amountDue",
        "chainId",
        "chainName",
        "description",
        "expiresAt",
        "merchantName",
        "orderId",
        "paymentId",
        "paymentUri",
        "receivedAmount",
        "recipientAddress",
        "redirectUrl",
        "remainingAmount",
        "serverTime",
        "stage",
        "status",
        "token",
      ].sort(),
    );
    expect(v).toMatchObject({
      paymentId: id,
      merchantName: "Test Merchant",
      status: "pending",
      stage: "awaiting_payment",
      chainId: 777177,
      chainName: "Service Chain Testnet",
      token: { address: usdt(), symbol: "USDT", decimals: 6 },
      amountDue: "5",
      amount: "5",
      receivedAmount: "0",
      remainingAmount: "5",
      description: "Two coffees",
      redirectUrl: null,
    });
    expect(v.recipientAddress).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(typeof v.expiresAt).toBe("number");
    expect(v.expiresAt).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect(typeof v.serverTime).toBe("number");
    expect(typeof v.orderId).toBe("string");
    expect(v.paymentUri).toBe(`ethereum:${usdt()}@777177/transfer?address=${v.recipientAddress}&uint256=5000000`);
  });

  it("native coin: an EIP-681 value URI", async () => {
    const id = await create({ chainId: "137", token: "0x0000000000000000000000000000000000000000", amount: "1.5" });
    const { body: v } = await status(id);
    expect(v.token).toEqual({ address: "0x0000000000000000000000000000000000000000", symbol: "MATIC", decimals: 18 });
    expect(v.chainName).toBe("Polygon");
    expect(v.paymentUri).toBe(`ethereum:${v.recipientAddress}@137?value=1500000000000000000`);
  });

  it("404 {error} for an unknown or malformed id; /api/payments/verify is not shadowed", async () => {
    for (const id of ["0b8e2c1e-4a57-4f7e-9a61-3c2d1e0f9a8b", "nope", "verify"]) {
      const res = await status(id);
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual({ error: "Payment not found" });
    }
    // The verify route still answers with its own shape and messages.
    const missing = await svc.http("GET", "/payments/verify");
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ valid: false, verified: false, error: "Missing payment ID" });
    const id = await create();
    const bad = await svc.http("GET", `/payments/verify?id=${id}&hash=${"0".repeat(64)}`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ valid: false, verified: false, error: "Invalid hash" });
  });

  // Chain tests wait on Ponder; on a loaded machine indexing takes tens of seconds: generous limits.
  it("a partial payment: received and remaining move, the URI and the QR ask for the rest", { timeout: 150_000 }, async () => {
    const id = await create({ gasless: true });
    const { body: v0 } = await status(id);
    await chainHelpers(chainOf(777177)).pay("USDT", v0.recipientAddress as Address, parseUnits("2", 6));
    const v = await waitFor(
      async () => {
        const { body } = await status(id);
        return body.receivedAmount === "2" && body;
      },
      { timeout: 120_000, interval: 250, what: "partial payment in the status route" },
    );
    expect(v).toMatchObject({ status: "pending", stage: "awaiting_payment", remainingAmount: "3", redirectUrl: null });
    expect(v.paymentUri.endsWith("&uint256=3000000")).toBe(true);
    const html = await (await page(id)).text();
    expect(html).toContain('<span id="received">2</span>');
    expect(html).toContain('<b id="send-amount">3</b>');
  });
});

describe("after a real payment on Anvil", () => {
  it(
    "moves to paid/completed; then the redirectUrl carries service, success and a hash that verify accepts",
    { timeout: 150_000 },
    async () => {
      const id = await create({ gasless: true });
      const { body: v0 } = await status(id);
      const seen: any[] = [];
      const t0 = Date.now();
      await chainHelpers(chainOf(777177)).pay("USDT", v0.recipientAddress as Address, 5_000000n);
      const done = await waitFor(
        async () => {
          const { status: code, body } = await status(id);
          expect(code).toBe(200);
          seen.push(body);
          return body.status === "completed" && body;
        },
        { timeout: 120_000, interval: 250, what: "payment completed in the status route" },
      );
      console.log(`[pay-page] statuses seen: ${[...new Set(seen.map((s) => s.status))].join(" -> ")} in ${Date.now() - t0} ms`);

      // Before completion there is never a redirect (the merchant's verify would not say verified yet).
      for (const s of seen.filter((s) => s.status !== "completed")) expect(s.redirectUrl, s.status).toBeNull();
      expect(done).toMatchObject({ stage: "completed", receivedAmount: "5", remainingAmount: "0" });

      const url = new URL(done.redirectUrl);
      expect(`${url.origin}${url.pathname}`).toBe("https://shop.example/return");
      expect(url.searchParams.get("service")).toBe(id);
      expect(url.searchParams.get("success")).toBe("true");
      const hash = url.searchParams.get("hash")!;
      expect(hash).toMatch(/^[0-9a-f]{64}$/);

      const verify = await svc.http("GET", `/payments/verify?id=${encodeURIComponent(id)}&hash=${encodeURIComponent(hash)}`);
      expect(verify.status).toBe(200);
      expect(verify.body).toMatchObject({ valid: true, verified: true, payment: { paymentId: id, status: "completed", chainId: 777177 } });

      // The page now shows the success state and embeds the redirect for its script.
      const html = await (await page(id)).text();
      expect(html).toContain('<span id="badge" class="badge completed">Paid</span>');
      expect(html).toContain('<section id="pay" hidden>');
      expect(html).toContain(JSON.stringify(done.redirectUrl).replace(/&/g, "\\u0026"));
      expect(html).toContain(`<a href="${done.redirectUrl.replace(/&/g, "&amp;")}">Continue</a>`);
    },
  );
});
