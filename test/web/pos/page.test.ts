import { createHash } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { takeFor } from "../../../api/middleware/rate-limit.js";
import { createCashier, posLogin, createTerminal, updateTerminal } from "../../../modules/terminals/index.js";
import { createPosSale } from "../../../flows/pos-sale.js";
import { FormClient } from "../dashboard/forms.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { payout, tokenKeyOf } from "./helpers.js";

// The POS page /pos/{terminalId} over HTTP: PIN sign-in (throttled), a sale through the payment creation of
// POST /payments (orderId POS-CODE-CASHIER-ts, the terminal object), the sale's QR and status, allowed cashiers,
// sign-out, deleted terminals, and the merchant's creation limit.
let svc: TestService;
let origin: string;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  origin = new URL(svc.url).origin;
});
afterAll(() => svc?.stop());
afterEach(() => svc.clock.resume());

const PINS = { alice: "20481024", bob: "40968192" };

/** A merchant with a terminal SHOP1 (USDT default, USDC also) and cashiers ALICE and BOB. */
async function shop(opts: { cashiers?: "alice" | "any"; payoutAddress?: string | null } = {}) {
  const m = await svc.newMerchant();
  const { cashier: alice } = await createCashier(svc.deps, m.id, { name: "Alice", code: "ALICE", pin: PINS.alice });
  const { cashier: bob } = await createCashier(svc.deps, m.id, { name: "Bob", code: "BOB", pin: PINS.bob });
  const to = opts.payoutAddress === undefined ? payout() : opts.payoutAddress;
  const terminal = await createTerminal(
    svc.deps.db,
    m.id,
    "SHOP1",
    "Front desk",
    {
      payoutAddress: to,
      defaultToken: tokenKeyOf(svc, 777177, "USDT"),
      allowedTokens: [tokenKeyOf(svc, 777177, "USDC")],
      cashiers: opts.cashiers === "alice" ? { only: [alice.id] } : "any",
    },
    svc.deps.chains,
  );
  return { m, alice, bob, terminal, payout: to, page: `/pos/${terminal.id}`, browser: new FormClient(origin) };
}

async function signIn(b: FormClient, page: string, pin: string) {
  return b.submit(page, `${page}/login`, { pin });
}

/** A PIN sign-in over HTTP from client address `from` (loopback is a trusted proxy: X-Forwarded-For is believed). */
async function attempt(terminalId: string, pin: string, from: string) {
  const headers = { "x-forwarded-for": from };
  const page = await fetch(`${origin}/pos/${terminalId}`, { headers });
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const csrf = FormClient.csrfOf(await page.text());
  return fetch(`${origin}/pos/${terminalId}/login`, {
    method: "POST",
    redirect: "manual",
    headers: { ...headers, cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, pin }),
  });
}

describe("POS sign-in", () => {
  it("shows the PIN screen, signs a cashier in with a cookie scoped to the terminal, and out again", async () => {
    const s = await shop();
    const first = await s.browser.get(s.page);
    expect(first.status).toBe(200);
    expect(first.html).toContain('data-testid="pos-pin"');
    expect(first.html).toContain('data-testid="pos-key-7"');
    expect(first.html).toContain("Front desk");

    // The cookie's attributes, read from a raw answer.
    const csrfCookie = await fetch(origin + s.page).then((r) => r.headers.getSetCookie()[0]!.split(";")[0]!);
    const csrf = FormClient.csrfOf(await fetch(origin + s.page, { headers: { cookie: csrfCookie } }).then((r) => r.text()));
    const raw = await fetch(`${origin}${s.page}/login`, {
      method: "POST",
      headers: { cookie: csrfCookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, pin: PINS.alice }),
      redirect: "manual",
    });
    expect(raw.status).toBe(303);
    const setCookie = raw.headers.getSetCookie().find((c) => c.startsWith("cp_pos="))!;
    expect(setCookie).toContain(`Path=/pos/${s.terminal.id}`);
    expect(setCookie).toContain("HttpOnly");
    const expires = Date.parse(/Expires=([^;]+)/.exec(setCookie)![1]!);
    expect(Math.abs(expires - (svc.clock.now() + 12 * 3600_000))).toBeLessThan(5_000);
    // Only the token's SHA-256 is stored.
    const token = setCookie.split(";")[0]!.slice("cp_pos=".length);
    const { rows } = await svc.deps.db.pool.query(`SELECT terminal_id, cashier_id, token_hash FROM pos_sessions WHERE terminal_id = $1`, [
      s.terminal.id,
    ]);
    expect(rows).toEqual([
      { terminal_id: s.terminal.id, cashier_id: s.alice.id, token_hash: createHash("sha256").update(token).digest("hex") },
    ]);

    const signed = await signIn(s.browser, s.page, PINS.alice);
    expect(signed.status).toBe(303);
    expect(signed.location).toBe(s.page);
    const sale = await s.browser.get(s.page);
    expect(sale.status).toBe(200);
    expect(sale.html).toContain('data-testid="pos-amount"');
    expect(sale.html).toContain('data-testid="pos-cashier-name">Alice<');
    // The default token is preselected.
    expect(sale.html).toMatch(new RegExp(`value="${tokenKeyOf(svc, 777177, "USDT")}" checked=""`));

    const out = await s.browser.submit(s.page, `${s.page}/logout`, {});
    expect(out.status).toBe(303);
    expect(s.browser.cookie("cp_pos")).toBeUndefined();
    expect((await s.browser.get(s.page)).html).toContain('data-testid="pos-pin"');
  });

  it("throttles wrong PINs: 5 are refused as wrong, then even the right PIN gets 429 until the lock ends", async () => {
    const s = await shop();
    svc.clock.freeze();
    for (let i = 0; i < 5; i++) {
      const wrong = await signIn(s.browser, s.page, "99999999");
      expect(wrong.status, `attempt ${i + 1}`).toBe(401);
      expect(wrong.html).toContain("Wrong PIN");
    }
    const locked = await signIn(s.browser, s.page, PINS.alice);
    expect(locked.status).toBe(429);
    expect(locked.html).toContain("Too many PIN attempts");
    expect(s.browser.cookie("cp_pos")).toBeUndefined();
    // The lock is per terminal: the same merchant's other terminal is not locked.
    const other = await createTerminal(svc.deps.db, s.m.id, "SHOP2", "Back door");
    expect((await signIn(new FormClient(origin), `/pos/${other.id}`, PINS.alice)).status).toBe(303);

    svc.clock.advance(31_000);
    expect((await signIn(s.browser, s.page, PINS.alice)).status).toBe(303);
    expect(s.browser.cookie("cp_pos")).toBeTruthy();
  });

  it("refuses a cashier the terminal does not allow exactly like a wrong PIN, and ends a session when no longer allowed", async () => {
    const s = await shop({ cashiers: "alice" });
    const bob = await signIn(s.browser, s.page, PINS.bob);
    const wrong = await signIn(s.browser, s.page, "99999999");
    expect(bob.status).toBe(401);
    expect(wrong.status).toBe(401);
    // The same page, byte for byte but for the form token: nothing tells that Bob's PIN is real.
    const page = (html: string) => html.replace(/name="_csrf" value="[^"]*"/g, "");
    expect(page(bob.html)).toBe(page(wrong.html));
    expect(bob.html).toContain("Wrong PIN");
    expect(s.browser.cookie("cp_pos")).toBeUndefined();

    expect((await signIn(s.browser, s.page, PINS.alice)).status).toBe(303);
    expect((await s.browser.get(s.page)).html).toContain('data-testid="pos-amount"');
    await updateTerminal(svc.deps.db, s.m.id, s.terminal.id, { payoutAddress: s.payout, cashiers: { only: [s.bob.id] } }, svc.deps.chains);
    expect((await s.browser.get(s.page)).html).toContain('data-testid="pos-pin"');

    // Another merchant's cashier PIN does nothing here.
    const other = await svc.newMerchant();
    await createCashier(svc.deps, other.id, { name: "Mallory", code: "MAL", pin: "77778888" });
    expect((await signIn(new FormClient(origin), s.page, "77778888")).status).toBe(401);
  });

  it("counts a not-allowed cashier's PIN as a failure: 5 of them lock that address out of the terminal, not others", async () => {
    const s = await shop({ cashiers: "alice" });
    svc.clock.freeze();
    for (let i = 0; i < 5; i++)
      await expect(posLogin(svc.deps, s.terminal.id, PINS.bob, "192.0.2.10"), `attempt ${i + 1}`).rejects.toMatchObject({
        kind: "unauthorized",
        message: "Wrong PIN",
      });
    await expect(posLogin(svc.deps, s.terminal.id, PINS.alice, "192.0.2.10")).rejects.toMatchObject({
      kind: "rate_limited",
      message: "Too many PIN attempts",
    });
    // Another address is not held back.
    expect((await posLogin(svc.deps, s.terminal.id, PINS.alice, "192.0.2.99")).session.cashier.code).toBe("ALICE");
  });

  it("40 wrong PINs from one address lock that address, not the shop: the right PIN works from other addresses on every terminal", async () => {
    const s = await shop();
    const tills = [s.terminal];
    for (let i = 2; i <= 5; i++) tills.push(await createTerminal(svc.deps.db, s.m.id, `SHOP${i}`, `Till ${i}`));
    svc.clock.freeze();
    const attacker = "203.0.113.66";
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await attempt(s.terminal.id, String(10_000_000 + i), attacker);
      statuses.push(r.status);
      if (r.status === 429) expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual(Array(35).fill(429));
    const locked = await attempt(s.terminal.id, PINS.alice, attacker);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    // The shop's cashiers, from their own addresses: the attacked terminal and another of the merchant's.
    expect((await attempt(s.terminal.id, PINS.alice, "203.0.113.10")).status).toBe(303);
    expect((await attempt(tills[1]!.id, PINS.bob, "203.0.113.11")).status).toBe(303);
    // The attack goes on at the other terminals: 5 wrong PINs each, until the address's 20th locks it everywhere.
    for (const till of tills.slice(1, 4)) {
      for (let i = 0; i < 5; i++) expect((await attempt(till.id, "12345678", attacker)).status).toBe(401);
      expect((await attempt(till.id, "12345678", attacker)).status).toBe(429);
    }
    expect((await attempt(tills[4]!.id, PINS.alice, attacker)).status).toBe(429);
    // Meanwhile every terminal still signs the shop's cashiers in.
    for (const [i, till] of tills.entries()) expect((await attempt(till.id, PINS.alice, `203.0.113.${20 + i}`)).status).toBe(303);
  });

  it("a till whose address mistyped is not locked out by an attack from another address", async () => {
    const s = await shop();
    const till2 = await createTerminal(svc.deps.db, s.m.id, "SHOP2", "Back door");
    svc.clock.freeze();
    // The shop's address (its tills behind one NAT) mistyped once at the back door.
    const shopAddress = "203.0.113.77";
    expect((await attempt(till2.id, "11112222", shopAddress)).status).toBe(401);
    for (let i = 0; i < 40; i++) await attempt(s.terminal.id, String(30_000_000 + i), "203.0.113.88");
    expect((await attempt(s.terminal.id, PINS.alice, "203.0.113.88")).status).toBe(429);
    expect((await attempt(till2.id, PINS.bob, shopAddress)).status).toBe(303);
    expect((await attempt(s.terminal.id, PINS.alice, shopAddress)).status).toBe(303);
  });

  it("guesses from many addresses lock no terminal: a step-up gives each failing address one wrong PIN, then a wait", async () => {
    const s = await shop();
    svc.clock.freeze();
    const tills = [];
    for (let i = 0; i < 6; i++) tills.push(await createTerminal(svc.deps.db, s.m.id, `TILL${i}`, `Till ${i}`));
    // 4 wrong PINs on each of 5 terminals, each from its own address: under every per-address limit.
    for (let t = 0; t < 5; t++)
      for (let i = 0; i < 4; i++)
        await expect(posLogin(svc.deps, tills[t]!.id, "99999999", `198.51.100.${t * 4 + i}`)).rejects.toMatchObject({
          message: "Wrong PIN",
        });
    // 20 over the merchant's terminals put them all in step-up; an address that has not failed still signs in.
    expect((await posLogin(svc.deps, tills[5]!.id, PINS.alice, "198.51.100.150")).session.cashier.code).toBe("ALICE");
    // An address that fails now gets one wrong PIN at that terminal (5 without the step-up), then waits there only.
    await expect(posLogin(svc.deps, tills[5]!.id, "99999999", "198.51.100.160")).rejects.toMatchObject({ message: "Wrong PIN" });
    await expect(posLogin(svc.deps, tills[5]!.id, PINS.alice, "198.51.100.160")).rejects.toMatchObject({
      kind: "rate_limited",
      message: "Too many PIN attempts",
    });
    expect((await posLogin(svc.deps, tills[4]!.id, PINS.alice, "198.51.100.160")).session.cashier.code).toBe("ALICE");
    // Another merchant's terminals are not in step-up: 5 wrong PINs before a wait.
    const other = await shop();
    for (let i = 0; i < 5; i++)
      await expect(posLogin(svc.deps, other.terminal.id, "99999999", "198.51.100.170")).rejects.toMatchObject({ message: "Wrong PIN" });

    svc.clock.advance(31_000);
    expect((await posLogin(svc.deps, tills[5]!.id, PINS.alice, "198.51.100.160")).session.cashier.code).toBe("ALICE");
  });

  it("10 wrong PINs at one terminal from many addresses put that terminal alone in step-up", async () => {
    const s = await shop();
    const till2 = await createTerminal(svc.deps.db, s.m.id, "SHOP2", "Back door");
    svc.clock.freeze();
    for (let i = 0; i < 10; i++)
      await expect(posLogin(svc.deps, s.terminal.id, "99999999", `198.51.101.${i}`)).rejects.toMatchObject({ message: "Wrong PIN" });
    const wrongThenRight = async (terminalId: string, from: string) => {
      await expect(posLogin(svc.deps, terminalId, "99999999", from)).rejects.toMatchObject({ message: "Wrong PIN" });
      return posLogin(svc.deps, terminalId, PINS.alice, from).then(
        () => "signed in",
        (e: { kind: string }) => e.kind,
      );
    };
    expect(await wrongThenRight(s.terminal.id, "198.51.101.100")).toBe("rate_limited");
    expect(await wrongThenRight(till2.id, "198.51.101.101")).toBe("signed in");
  });

  it("refuses a form without its token", async () => {
    const s = await shop();
    await s.browser.get(s.page);
    expect((await s.browser.post(`${s.page}/login`, { pin: PINS.alice })).status).toBe(403);
  });
});

describe("POS sale", () => {
  it("creates the payment like POST /payments: orderId POS-SHOP1-ALICE-ts, the terminal, its payout; shows QR, link and status", async () => {
    const s = await shop();
    await signIn(s.browser, s.page, PINS.alice);
    const before = Date.now();
    const sale = await s.browser.submit(s.page, `${s.page}/sale`, { amount: "12.5", token: tokenKeyOf(svc, 777177, "USDT") });
    expect(sale.status, sale.html).toBe(303);
    const paymentId = new RegExp(`^${s.page}/sale/([0-9a-f-]{36})$`).exec(sale.location ?? "")?.[1];
    expect(paymentId).toBeTruthy();

    const listed = await svc.http("GET", `/v1/payments`, { apiKey: s.m.apiKey });
    expect(listed.status).toBe(200);
    const p = (listed.body.data as any[]).find((x) => x.paymentId === paymentId);
    expect(p.orderId).toMatch(/^POS-SHOP1-ALICE-\d+$/);
    expect(Number(p.orderId.split("-")[3])).toBeGreaterThanOrEqual(before - 60_000);
    expect(p.terminal).toEqual({ terminalId: s.terminal.id, code: "SHOP1", name: "Front desk" });
    expect(p).toMatchObject({ status: "pending", chainId: "777177", amount: "12.5", merchant: s.payout });
    expect(p.token.symbol).toBe("USDT");
    // The payer-facing description is the terminal's name; the cashier is only in the orderId.
    expect(p.description).toBe("Front desk");
    expect(JSON.stringify(p)).not.toContain("Alice");
    // Same pricing as the API: fees filled in.
    expect(p.fees.processingFee).toMatch(/^\d+(\.\d+)?$/);
    // Registered for the indexer, like every payment.
    const watched = await svc.deps.db.pool.query(`SELECT 1 FROM watched_addresses WHERE owner_id = $1 AND kind = 'payment'`, [paymentId]);
    expect(watched.rows).toHaveLength(1);

    const page = await s.browser.get(sale.location!);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/data-testid="pos-qr"[^>]*><svg/);
    expect(page.html).toContain(
      `href="${svc.deps.config.appUrl}/pay/${paymentId}" target="_blank" rel="noopener" data-testid="pos-payment-link"`,
    );
    expect(page.html).toMatch(/data-status="pending" data-stage="awaiting_payment" data-testid="pos-status">Awaiting payment</);
    // Who is paid: the business name, for the customer reading the screen.
    expect(page.html).toContain('Payment to <b id="merchant-name">Test Merchant</b>');
    expect(page.html).toContain('data-testid="pos-sale-amount">12.5 USDT<');
    expect(page.html).toContain('data-testid="pos-new-sale"');
    expect(page.html).toContain(`data-status-url="/api/payments/${paymentId}/status"`);
    const status = await fetch(`${svc.url}/payments/${paymentId}/status`);
    expect(status.status).toBe(200);
    expect(((await status.json()) as { stage: string }).stage).toBe("awaiting_payment");

    // The script and stylesheet the page names are served.
    const js = /src="(\/pos\/assets\/pos\.js\?v=[0-9a-f]+)"/.exec(page.html)![1]!;
    const css = /href="(\/pos\/assets\/pos\.css\?v=[0-9a-f]+)"/.exec(page.html)![1]!;
    expect((await fetch(origin + js)).status).toBe(200);
    expect((await fetch(origin + css)).status).toBe(200);
  });

  it("cuts a long terminal name to 200 characters for the description, never inside a character", async () => {
    const s = await shop();
    const { session } = await posLogin(svc.deps, s.terminal.id, PINS.alice, "203.0.113.50");
    // 251 characters, each but the first two UTF-16 units: a cut at 200 units would split a pair.
    const name = "a" + "😀".repeat(250);
    const sale = await createPosSale(
      svc.deps,
      { ...session, terminal: { ...session.terminal, name } },
      {
        amount: "1",
        token: tokenKeyOf(svc, 777177, "USDT"),
      },
    );
    const { rows } = await svc.deps.db.pool.query(`SELECT description FROM payments WHERE id = $1`, [sale.paymentId]);
    expect(rows[0].description).toBe("a" + "😀".repeat(199));
  });

  it("accepts only the terminal's tokens and positive amounts; no payout address blocks the sale", async () => {
    const s = await shop();
    await signIn(s.browser, s.page, PINS.alice);
    const foreign = await s.browser.submit(s.page, `${s.page}/sale`, { amount: "5", token: tokenKeyOf(svc, 137, "USDC") });
    expect(foreign.status).toBe(400);
    expect(foreign.html).toContain("This terminal does not accept that token");
    const zero = await s.browser.submit(s.page, `${s.page}/sale`, { amount: "0", token: tokenKeyOf(svc, 777177, "USDC") });
    expect(zero.status).toBe(400);
    expect(zero.html).toContain("Amount must be a positive number");
    // A keypad amount ending in its point is whole.
    expect((await s.browser.submit(s.page, `${s.page}/sale`, { amount: "7.", token: tokenKeyOf(svc, 777177, "USDC") })).status).toBe(303);

    const bare = await shop({ payoutAddress: null });
    await signIn(bare.browser, bare.page, PINS.alice);
    expect((await bare.browser.get(bare.page)).html).toContain("This terminal has no payout address yet");
    const refused = await bare.browser.submit(bare.page, `${bare.page}/sale`, { amount: "5", token: tokenKeyOf(svc, 777177, "USDT") });
    expect(refused.status).toBe(409);
    expect(refused.html).toContain("This terminal has no payout address yet: set one in the dashboard");
    const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE merchant_id = $1`, [bare.m.id]);
    expect(rows[0].n).toBe(0);
  });

  it("takes from the merchant's per-minute creation budget, the one POST /payments uses", async () => {
    const s = await shop();
    await signIn(s.browser, s.page, PINS.alice);
    svc.clock.freeze();
    for (let i = 0; i < 100; i++) await takeFor(svc.deps, "payments.create", { merchantId: s.m.id });
    const limited = await s.browser.submit(s.page, `${s.page}/sale`, { amount: "1", token: tokenKeyOf(svc, 777177, "USDT") });
    expect(limited.status).toBe(429);
    expect(limited.html).toContain("Too many requests");
    const api = await svc.http("POST", "/payments", {
      apiKey: s.m.apiKey,
      body: { merchant: s.payout, chainId: "777177", token: tokenKeyOf(svc, 777177, "USDT").split(":")[1], amount: "1", orderId: "o-1" },
    });
    expect(api.status).toBe(429);
  });

  it("needs a session: without one a sale goes back to the PIN screen; another terminal's payment is not shown", async () => {
    const s = await shop();
    const anon = await s.browser.submit(s.page, `${s.page}/sale`, { amount: "3", token: tokenKeyOf(svc, 777177, "USDT") });
    expect(anon.status).toBe(303);
    expect(anon.location).toBe(s.page);

    const t = await shop();
    await signIn(t.browser, t.page, PINS.alice);
    const theirs = await t.browser.submit(t.page, `${t.page}/sale`, { amount: "3", token: tokenKeyOf(svc, 777177, "USDT") });
    const theirId = theirs.location!.split("/").pop()!;
    await signIn(s.browser, s.page, PINS.alice);
    const peek = await s.browser.get(`${s.page}/sale/${theirId}`);
    expect(peek.status).toBe(404);
    expect(peek.html).toContain("Sale not found");
  });

  it("a deleted terminal's POS page is 404, also for a signed-in cashier", async () => {
    const s = await shop();
    await signIn(s.browser, s.page, PINS.alice);
    // The sale form's token, read while the terminal lives (it is bound to the cashier's session).
    const csrf = FormClient.csrfOf((await s.browser.get(s.page)).html);
    await svc.deps.db.pool.query(`UPDATE terminals SET deleted_at = now() WHERE id = $1`, [s.terminal.id]);
    const gone = await s.browser.get(s.page);
    expect(gone.status).toBe(404);
    expect(gone.html).toContain("Terminal not found");
    expect(
      (await s.browser.submit(s.page, `${s.page}/sale`, { amount: "1", token: tokenKeyOf(svc, 777177, "USDT") }, { csrf })).status,
    ).toBe(404);
    expect((await new FormClient(origin).get(`/pos/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await new FormClient(origin).get(`/pos/not-a-terminal`)).status).toBe(404);
  });
});
