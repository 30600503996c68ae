import { randomBytes, randomUUID } from "node:crypto";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../../helpers/service.js";
import { signedIn } from "./forms.js";

// /dashboard/promotion and /dashboard/vault over HTTP on the test stack: the promotion as GET /promo-status
// answers it; the vault read only (its webhook secret never shown), users and deposits a page at a time, and
// another merchant's vault a 404.

const CHAIN = 777177;
let svc: TestService;
let USDT: string;

beforeAll(async () => {
  svc = await startTestService({ processors: false });
  USDT = svc.deps.chains.find((c) => c.chainId === CHAIN)!.tokens.find((t) => t.symbol === "USDT")!.address;
});
afterAll(() => svc?.stop());

const cell = (html: string, testId: string) => new RegExp(`data-testid="${testId}"[^>]*>([^<]*)<`).exec(html)?.[1];

describe("dashboard promotion", () => {
  it("shows what GET /promo-status answers", async () => {
    const a = await signedIn(svc, "Promo A");
    const api = await svc.http("GET", "/promo-status", { apiKey: a.apiKey });
    expect(api.body).toEqual({ freeTransactions: { eligible: true, used: 0, remaining: 30 } });
    const page = await a.browser.get("/dashboard/promotion");
    expect(page.status).toBe(200);
    expect(cell(page.html, "promo-eligible")).toBe("yes");
    expect(cell(page.html, "promo-used")).toBe("0");
    expect(cell(page.html, "promo-remaining")).toBe("30");

    const member = await signedIn(svc, "Promo M", { type: "member" });
    const mApi = await svc.http("GET", "/promo-status", { apiKey: member.apiKey });
    expect(mApi.body).toEqual({ freeTransactions: { eligible: false, used: 0, remaining: 0 } });
    const mPage = await member.browser.get("/dashboard/promotion");
    expect(cell(mPage.html, "promo-eligible")).toBe("no");
    expect(cell(mPage.html, "promo-remaining")).toBe("0");
    expect(mPage.html).toContain("the promotion does not apply to it");
  });
});

/** A vault for the merchant's key, with USDT enabled and a signed webhook; returns its public id and secret. */
async function vaultOf(apiKey: string, businessName: string) {
  const walletAddress = privateKeyToAccount(generatePrivateKey()).address;
  const created = await svc.http("POST", "/vault/v1/config", {
    apiKey,
    body: { businessName, walletAddress, enabledTokens: [{ chainId: CHAIN, token: USDT, tokenSymbol: "USDT" }] },
  });
  expect(created.status).toBe(201);
  const hook = await svc.http("PUT", "/vault/v1/config/webhooks", {
    apiKey,
    body: { url: `https://hooks.example/${businessName.replace(/\W/g, "")}`, events: ["deposit.*"] },
  });
  expect(hook.status, JSON.stringify(hook.body)).toBeLessThan(300);
  expect(hook.body.data.secret).toMatch(/^whsec_/);
  return { publicId: created.body.data.publicId as string, walletAddress, secret: hook.body.data.secret as string };
}

/** A deposit row of a user, as detection records one (no chain needed for the screen). */
async function deposit(userAddress: string, amount: bigint, status: string) {
  const { rows } = await svc.deps.db.pool.query(`SELECT * FROM vault_users WHERE address = $1 AND chain_id = $2`, [
    userAddress.toLowerCase(),
    CHAIN,
  ]);
  const u = rows[0];
  const fee = (amount * 25n) / 10_000n;
  await svc.deps.db.pool.query(
    `INSERT INTO vault_deposits (vault_id, merchant_id, vault_user_id, chain_id, address, payout, token_address, token_symbol, token_decimals,
       amount, fee, net_amount, status, transfer_id, deposit_tx_hash, block_number, log_index)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'USDT', 6, $8, $9, $10, $11, $12, $13, 1, 0)`,
    [
      u.vault_id,
      u.merchant_id,
      u.id,
      CHAIN,
      u.address,
      u.business_wallet,
      USDT.toLowerCase(),
      amount.toString(),
      fee.toString(),
      (amount - fee).toString(),
      status,
      `t:${randomUUID()}`,
      `0x${randomBytes(32).toString("hex")}`,
    ],
  );
}

describe("dashboard vault", () => {
  it("without a vault, says how to create one with the API", async () => {
    const a = await signedIn(svc, "No Vault");
    const page = await a.browser.get("/dashboard/vault");
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-testid="no-vault"');
    expect(page.html).toContain("/api/vault/v1/config");
  });

  it("shows the vault's configuration, tokens, webhook without its secret, users and deposits a page at a time", async () => {
    const a = await signedIn(svc, "Vault A");
    const v = await vaultOf(a.apiKey, "Acme Games");
    const addresses: string[] = [];
    for (let i = 0; i < 27; i++) {
      svc.clock.advance(2);
      const r = await svc.http("POST", "/vault/v1/users", {
        apiKey: a.apiKey,
        body: { externalUserId: `user-${i}`, chainId: CHAIN, tokenAddress: USDT },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      addresses.push(r.body.data.depositAddress);
    }
    await deposit(addresses[0]!, 1_500_000n, "completed");
    await deposit(addresses[1]!, 2_000_000n, "detected");

    const list = await a.browser.get("/dashboard/vault");
    expect(list.html).toContain(`href="/dashboard/vault/${v.publicId}"`);
    const page = await a.browser.get(`/dashboard/vault/${v.publicId}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain("Acme Games");
    expect(page.html).toContain(v.walletAddress);
    expect(page.html).toContain(USDT);
    expect(page.html).toContain("https://hooks.example/AcmeGames");
    expect(page.html).toContain("0.25%");
    expect(page.html).not.toContain(v.secret);
    expect(page.html).not.toContain("whsec_");
    expect(cell(page.html, "vault-status")).toBe("active");

    // Users: newest first, 25 then 2.
    const shown = [...page.html.matchAll(/data-testid="vault-user-row"><td class="mono">([^<]+)</g)].map((m) => m[1]);
    expect(shown).toEqual(Array.from({ length: 25 }, (_, i) => `user-${26 - i}`));
    expect(page.html).toContain(addresses[26]!);
    const older = /href="([^"]+)">Older users/.exec(page.html)?.[1]?.replace(/&amp;/g, "&");
    const second = await a.browser.get(older!);
    expect([...second.html.matchAll(/data-testid="vault-user-row"><td class="mono">([^<]+)</g)].map((m) => m[1])).toEqual([
      "user-1",
      "user-0",
    ]);
    expect(second.html).toContain(addresses[0]!);

    // Deposits: exact amounts in tokens, status badges.
    const statuses = [...page.html.matchAll(/data-testid="deposit-status">([^<]+)</g)].map((m) => m[1]);
    expect(statuses).toEqual(["detected", "completed"]);
    expect(page.html).toContain("1.5 USDT");
    expect(page.html).toContain("1.49625");
    expect(page.html).toContain("2 USDT");
    expect((await a.browser.get(`/dashboard/vault/${v.publicId}?deposits=forged`)).status).toBe(400);
  });

  it("merchant B gets 404 for A's vault and sees none of A's vault data", async () => {
    const a = await signedIn(svc, "Vault Alpha");
    const b = await signedIn(svc, "Vault Beta");
    const v = await vaultOf(a.apiKey, "Alpha Casino");
    const r = await svc.http("POST", "/vault/v1/users", {
      apiKey: a.apiKey,
      body: { externalUserId: "alpha-user", chainId: CHAIN, tokenAddress: USDT },
    });
    expect(r.status).toBe(201);
    const other = await b.browser.get(`/dashboard/vault/${v.publicId}`);
    expect(other.status).toBe(404);
    expect(other.html).toContain("Vault not found");
    expect(other.html).not.toContain("Alpha Casino");
    const bList = await b.browser.get("/dashboard/vault");
    expect(bList.html).toContain('data-testid="no-vault"');
    expect(bList.html).not.toContain(v.publicId);
    expect(bList.html).not.toContain("alpha-user");
    expect(bList.html).not.toContain(r.body.data.depositAddress);
  });
});
