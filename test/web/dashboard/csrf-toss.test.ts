import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createTerminal, getTerminal } from "../../../modules/terminals/index.js";
import { FormClient, signedIn } from "./forms.js";
import { createDashboard } from "../../../web/dashboard/index.js";
import { createPos } from "../../../web/pos/index.js";
import { launchBrowser, newPage, screenshot } from "../../helpers/browser.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Cookie tossing: a page on the same site but another origin (here another port of 127.0.0.1; in production a
// sibling subdomain) can set cookies the dashboard receives. It takes a (cookie, form token) pair the dashboard
// hands any visitor, tosses the cookie into the merchant's browser and posts forms with the token. Every
// state-changing dashboard and POS form must refuse it: the Origin check refuses the browser's post, and the
// token, bound to the session, refuses it even without the Origin check.

let svc: TestService;
let browser: Browser;
let attacker: Server;
let attackerOrigin = "";
let origin = "";
const ATTACKER_PAYOUT = "0x000000000000000000000000000000000000dEaD";

/** What the forms could change: the merchant's rows (counts and the settings the forms write) and attacker accounts. */
async function stateOf(merchantId: string) {
  const { rows } = await svc.deps.db.pool.query(
    `SELECT (SELECT count(*)::int FROM terminals WHERE merchant_id = $1 AND deleted_at IS NULL) AS terminals,
            (SELECT string_agg(coalesce(payout_address, '') || '/' || name, ',') FROM terminals WHERE merchant_id = $1) AS payouts,
            (SELECT count(*)::int FROM cashiers WHERE merchant_id = $1 AND deleted_at IS NULL) AS cashiers,
            (SELECT count(*)::int FROM api_keys WHERE merchant_id = $1 AND revoked_at IS NULL AND expires_at IS NULL) AS live_keys,
            (SELECT count(*)::int FROM webhook_configs WHERE merchant_id = $1) AS webhooks,
            (SELECT count(*)::int FROM sessions WHERE merchant_id = $1) AS sessions,
            (SELECT gas_tank_alert_micros::text FROM merchants WHERE id = $1) AS alert,
            (SELECT count(*)::int FROM merchants WHERE email LIKE '%@evil.example') AS evil_accounts`,
    [merchantId],
  );
  return rows[0] as Record<string, unknown>;
}

/** What the dashboard gives any visitor: a form-token cookie and the token of its forms. */
async function visitorPair(): Promise<{ cookie: string; token: string }> {
  const res = await fetch(origin + "/dashboard/login");
  const cookie = res.headers
    .getSetCookie()
    .map((l) => /^cp_csrf=([^;]+)/.exec(l)?.[1])
    .find(Boolean)!;
  return { cookie, token: FormClient.csrfOf(await res.text()) };
}

beforeAll(async () => {
  [svc, browser] = await Promise.all([startTestService({ processors: false }), launchBrowser()]);
  origin = new URL(svc.url).origin;
  // The attacker's page: tosses the cookie for the host (cookies are not scoped to a port) on a longer path than the
  // dashboard's own, so that the browser sends it first and cannot refuse it as an overwrite; then posts a form.
  attacker = createServer((req, res) => {
    const q = new URL(req.url!, "http://x").searchParams;
    const fields = JSON.parse(q.get("fields") ?? "{}") as Record<string, string>;
    const inputs = Object.entries(fields)
      .map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`)
      .join("");
    res.writeHead(200, { "content-type": "text/html" }).end(
      `<!doctype html><form id="f" method="post" action="${q.get("action")}">${inputs}</form>
       <script>for (const path of ["/dashboard", "/pos"]) document.cookie = "cp_csrf=${q.get("cookie")}; path=" + path;
       document.getElementById("f").submit();</script>`,
    );
  });
  await new Promise<void>((r) => attacker.listen(0, "127.0.0.1", r));
  attackerOrigin = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => attacker?.close(r));
  await svc?.stop();
});

describe("a tossed form-token cookie", () => {
  it("is refused on every state-changing dashboard and POS form posted from a same-site page; nothing changes", async () => {
    const m = await signedIn(svc, "Tossed Shop");
    const honest = privateKeyToAccount(generatePrivateKey()).address;
    const t = await createTerminal(svc.deps.db, m.id, "TOSS1", "Till", { payoutAddress: honest }, svc.deps.chains);
    const id = "00000000-0000-4000-8000-000000000000";
    const forms: [string, Record<string, string>][] = [
      [`/dashboard/terminals/${t.id}`, { name: "Till", payoutAddress: ATTACKER_PAYOUT, cashierAccess: "any" }],
      ["/dashboard/webhooks", { url: "https://attacker.example/hook", events: "payment.completed", isActive: "on" }],
      ["/dashboard/webhooks/secret", {}],
      ["/dashboard/webhooks/delete", {}],
      ["/dashboard/webhooks/test", {}],
      [`/dashboard/webhooks/deliveries/${id}/resend`, {}],
      ["/dashboard/terminals", { code: "EVIL1", name: "Evil", payoutAddress: ATTACKER_PAYOUT }],
      [`/dashboard/terminals/${t.id}/delete`, {}],
      ["/dashboard/cashiers", { name: "Mallory", pin: "135790" }],
      [`/dashboard/cashiers/${id}/delete`, {}],
      ["/dashboard/api-keys", {}],
      [`/dashboard/api-keys/${id}/revoke`, {}],
      [`/dashboard/api-keys/${id}/roll`, {}],
      [`/dashboard/payments/${id}/withdraw`, {}],
      [`/dashboard/payments/${id}/cancel`, {}],
      [`/dashboard/payments/${id}/recover`, { token: ATTACKER_PAYOUT }],
      ["/dashboard/agent/markup", { markupBps: "0" }],
      ["/dashboard/agent/payout-address", { payoutAddress: ATTACKER_PAYOUT }],
      ["/dashboard/agent/withdrawals", {}],
      ["/dashboard/gas-tank/alert", { threshold: "0" }],
      ["/dashboard/logout", {}],
      ["/dashboard/login", { email: "attacker@evil.example", password: "attacker password" }],
      ["/dashboard/signup", { name: "Evil", email: "evil@evil.example", password: "attacker password!" }],
      [`/pos/${t.id}/login`, { pin: "135790" }],
      [`/pos/${t.id}/sale`, { amount: "1", token: "x" }],
      [`/pos/${t.id}/logout`, {}],
    ];

    // The list is every state-changing route the dashboard and the POS mount: a new form must join it.
    const stub = { clientKey: () => "x", statusOf: () => 400 as const };
    const mounted = [
      ...createDashboard({ ...stub, limit: () => async (_c, next) => next() }).routes.map((r) => [r.method, "/dashboard" + r.path]),
      ...createPos({ ...stub, takeSale: async () => ({ allowed: true, retryAfterMs: 0 }) }).routes.map((r) => [r.method, "/pos" + r.path]),
    ].filter(([method]) => method !== "GET" && method !== "ALL");
    expect(mounted.length).toBeGreaterThanOrEqual(26);
    for (const [method, path] of mounted) {
      const pattern = new RegExp(`^${path!.replace(/:[A-Za-z]+/g, "[^/]+")}$`);
      expect(
        forms.some(([action]) => pattern.test(action)),
        `${method} ${path} is not in the list`,
      ).toBe(true);
    }

    // The merchant signs in, in a real browser.
    const { context, page } = await newPage(browser);
    await page.goto(origin + "/dashboard/login");
    await page.fill('input[name="email"]', m.email);
    await page.fill('input[name="password"]', "correct horse battery");
    await Promise.all([page.waitForURL(`${origin}/dashboard**`), page.click('button[type="submit"]')]);
    expect((await context.cookies(origin)).map((c) => c.name)).toContain("cp_session");

    const before = await stateOf(m.id);
    const statuses: Record<string, number> = {};
    for (const [action, fields] of forms) {
      const pair = await visitorPair();
      const url = `${attackerOrigin}/?${new URLSearchParams({ action: origin + action, cookie: pair.cookie, fields: JSON.stringify({ ...fields, _csrf: pair.token }) })}`;
      const [res] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST" && r.url() === origin + action),
        page.goto(url),
      ]);
      statuses[action] = res.status();
      if (action.endsWith(`/terminals/${t.id}`)) await screenshot(page, "csrf-tossed-cookie-refused");
    }
    expect(statuses).toEqual(Object.fromEntries(forms.map(([a]) => [a, 403])));

    // Nothing changed: the payout, the webhook, every row a form writes, the session.
    expect((await getTerminal(svc.deps.db, m.id, t.id)).payoutAddress?.toLowerCase()).toBe(honest.toLowerCase());
    const after = await stateOf(m.id);
    expect(after).toEqual(before);
    expect(after.webhooks).toBe(0);
    await page.goto(origin + "/dashboard/terminals");
    expect(page.url()).toBe(`${origin}/dashboard/terminals`);
    await context.close();
  });

  it("without any origin header (no browser check to lean on), a token not issued to this session is refused", async () => {
    const m = await signedIn(svc, "Bound Token Shop");
    const honest = privateKeyToAccount(generatePrivateKey()).address;
    const t = await createTerminal(svc.deps.db, m.id, "BOUND1", "Till", { payoutAddress: honest }, svc.deps.chains);
    const pair = await visitorPair();
    m.browser.setCookie("cp_csrf", pair.cookie);
    const forged = await m.browser.post(`/dashboard/terminals/${t.id}`, {
      _csrf: pair.token,
      name: "Till",
      payoutAddress: ATTACKER_PAYOUT,
      cashierAccess: "any",
    });
    expect(forged.status).toBe(403);
    expect((await getTerminal(svc.deps.db, m.id, t.id)).payoutAddress?.toLowerCase()).toBe(honest.toLowerCase());

    // The same browser's own form, read from its page with the tossed cookie, is served: the token is this session's.
    const own = await m.browser.submit(`/dashboard/terminals/${t.id}`, `/dashboard/terminals/${t.id}`, {
      name: "Till 2",
      payoutAddress: honest,
      cashierAccess: "any",
    });
    expect(own.status, own.html.slice(0, 300)).toBe(303);
  });

  it("a same-site request announced by Sec-Fetch-Site, or from another origin, is refused even with a valid token", async () => {
    const m = await signedIn(svc, "Origin Shop");
    const page = await m.browser.get("/dashboard/webhooks");
    const token = FormClient.csrfOf(page.html);
    const send = (headers: Record<string, string>) =>
      fetch(origin + "/dashboard/webhooks/test", {
        method: "POST",
        redirect: "manual",
        headers: {
          cookie: `cp_session=${m.browser.cookie("cp_session")}; cp_csrf=${m.browser.cookie("cp_csrf")}`,
          "content-type": "application/x-www-form-urlencoded",
          ...headers,
        },
        body: new URLSearchParams({ _csrf: token }),
      });
    const refused = await send({ origin: attackerOrigin });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("sent from another site or address");
    expect((await send({ "sec-fetch-site": "same-site" })).status).toBe(403);
    // Only the page itself (or the user) may post: `same-site` is refused even beside an Origin of ours.
    expect((await send({ origin, "sec-fetch-site": "same-site" })).status).toBe(403);
    expect((await send({ origin, "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await send({ origin, "sec-fetch-site": "same-origin" })).status).not.toBe(403);
  });
});
