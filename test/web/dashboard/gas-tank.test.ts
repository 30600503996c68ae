import { randomUUID } from "node:crypto";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../../helpers/service.js";
import { dashboardWith, ODD_STATUS, signedIn } from "./forms.js";

// /dashboard/gas-tank over HTTP on the test stack: the balance and deposit addresses of GET /balance, the
// runway from the last 7 days' settlement spend, the ledger a page at a time, the alert threshold kept
// exactly, and nothing of another merchant.

const DAY = 86_400_000;
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(() => svc?.stop());

/** A ledger entry `daysAgo` days back on the service's clock. */
async function entry(merchantId: string, kind: string, micros: bigint, daysAgo: number, paymentId: string | null = null) {
  await svc.deps.db.pool.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, payment_id, chain_id, reference, created_at) VALUES ($1, $2, $3, $4, 777177, $5, $6)`,
    [merchantId, kind, micros.toString(), paymentId, `test:${randomUUID()}`, new Date(svc.clock.now() - daysAgo * DAY)],
  );
}

/** A real payment of the merchant (POST /payments), for a ledger entry to point to. */
async function payment(apiKey: string, merchantId: string) {
  const USDT = svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!.address;
  const res = await svc.http("POST", "/payments", {
    apiKey,
    body: {
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      chainId: "777177",
      token: USDT,
      amount: "12.5",
      orderId: `o-${randomUUID()}`,
    },
  });
  expect(res.status).toBe(200);
  const { rows } = await svc.deps.db.pool.query(`SELECT id FROM payments WHERE merchant_id = $1 ORDER BY created_at DESC LIMIT 1`, [
    merchantId,
  ]);
  return rows[0].id as string;
}

const text = (html: string, testId: string) =>
  new RegExp(`data-testid="${testId}"[^>]*>([\\s\\S]*?)</(?:strong|dd|td)>`)
    .exec(html)?.[1]
    ?.replace(/<[^>]+>/g, "")
    .replace(/&#39;/g, "'");

const SCREENS = ["/dashboard/payments", "/dashboard/api-keys", "/dashboard/webhooks", "/dashboard/promotion", "/dashboard/vault"];
const banner = (html: string) =>
  /<div class="notice warn" role="status" data-testid="low-gas-tank">([\s\S]*?)<\/div>/.exec(html)?.[1]?.replace(/\s+/g, " ").trim() ??
  null;

describe("dashboard Gas Tank", () => {
  it("shows the balance and deposit addresses of GET /balance, the runway and the ledger with payment links", async () => {
    const a = await signedIn(svc, "Tank A");
    const paymentId = await payment(a.apiKey, a.id);
    await entry(a.id, "gas_tank_deposit", 100_000_000n, 10);
    await entry(a.id, "settlement_fee", -50_000_000n, 8); // outside the 7-day window: not in the runway
    await entry(a.id, "settlement_fee", -7_500_000n, 2, paymentId);
    await entry(a.id, "settlement_refund", 500_000n, 1, paymentId);
    await entry(a.id, "adjustment", 123_456n, 0.5);
    // Balance 43.123456; 7-day spend 7.000000 (fee net of its refund): 1 USDT a day, 43 days.

    const api = await svc.http("GET", "/balance", { apiKey: a.apiKey });
    expect(api.status).toBe(200);
    expect(api.body.balance).toBe("43.123456");
    expect(api.body.depositAddresses.length).toBeGreaterThan(0);

    const page = await a.browser.get("/dashboard/gas-tank");
    expect(page.status).toBe(200);
    expect(text(page.html, "gas-balance")).toBe("43.123456");
    for (const d of api.body.depositAddresses) {
      const card = new RegExp(`data-testid="gas-address" data-chain-id="${d.chainId}"[\\s\\S]*?</section>`).exec(page.html)?.[0];
      expect(card).toContain(d.address);
      expect(card).toMatch(/<div class="qr"><svg [^>]*viewBox/);
    }
    expect(text(page.html, "gas-runway")).toBe("About 43 days left (at 1.000000 USDT a day, the last 7 days' average)");
    expect(page.html).not.toContain('data-testid="low-balance"');

    const amounts = [...page.html.matchAll(/data-testid="ledger-amount">([^<]+)</g)].map((m) => m[1]);
    expect(amounts).toEqual(["+0.123456", "+0.500000", "-7.500000", "-50.000000", "+100.000000"]);
    expect(page.html.match(new RegExp(`href="/dashboard/payments/${paymentId}"`, "g"))).toHaveLength(2);
  });

  it("says so when nothing was spent in the last 7 days, and pages the ledger newest first", async () => {
    const a = await signedIn(svc, "Tank P");
    for (let i = 0; i < 27; i++) await entry(a.id, "gas_tank_deposit", BigInt(i + 1) * 1_000_000n, 30 - i);
    const first = await a.browser.get("/dashboard/gas-tank");
    expect(text(first.html, "gas-runway")).toBe("No spend in the last 7 days: no estimate.");
    expect(text(first.html, "gas-balance")).toBe("378.000000");
    const amounts = [...first.html.matchAll(/data-testid="ledger-amount">([^<]+)</g)].map((m) => m[1]);
    expect(amounts).toHaveLength(25);
    expect(amounts[0]).toBe("+27.000000");
    expect(amounts[24]).toBe("+3.000000");
    const older = /href="(\/dashboard\/gas-tank\?before=\d+)">Older entries/.exec(first.html)?.[1];
    const second = await a.browser.get(older!);
    expect([...second.html.matchAll(/data-testid="ledger-amount">([^<]+)</g)].map((m) => m[1])).toEqual(["+2.000000", "+1.000000"]);
    expect(second.html).not.toContain("Older entries");
    expect((await a.browser.get("/dashboard/gas-tank?before=abc")).status).toBe(400);
    // Past the largest bigserial: refused here, not by Postgres as a 500.
    expect((await a.browser.get("/dashboard/gas-tank?before=9999999999999999999")).status).toBe(400);
  });

  it("keeps the alert threshold exactly, warns below it, refuses what is not a USDT amount and clears on empty", async () => {
    const a = await signedIn(svc, "Tank Alert");
    await entry(a.id, "gas_tank_deposit", 20_000_000n, 1);
    const saved = await a.browser.submit("/dashboard/gas-tank", "/dashboard/gas-tank/alert", { threshold: "12.345678" });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe("/dashboard/gas-tank?alert=saved");
    const { rows } = await svc.deps.db.pool.query(`SELECT gas_tank_alert_micros::text AS a FROM merchants WHERE id = $1`, [a.id]);
    expect(rows[0].a).toBe("12345678");
    const page = await a.browser.get(saved.location!);
    expect(page.html).toContain('name="threshold" inputmode="decimal" autocomplete="off" placeholder="25" value="12.345678"');
    expect(page.html).not.toContain('data-testid="low-balance"');

    await a.browser.submit("/dashboard/gas-tank", "/dashboard/gas-tank/alert", { threshold: "20.000001" });
    const low = await a.browser.get("/dashboard/gas-tank");
    expect(low.html).toContain('data-testid="low-balance"');
    expect(low.html).toContain("below your alert threshold of 20.000001 USDT");
    // Equal to the balance is not below it.
    await a.browser.submit("/dashboard/gas-tank", "/dashboard/gas-tank/alert", { threshold: "20" });
    expect((await a.browser.get("/dashboard/gas-tank")).html).not.toContain('data-testid="low-balance"');

    for (const bad of ["1.2345678", "-5", "1e3", "12,5", "abc"]) {
      const r = await a.browser.submit("/dashboard/gas-tank", "/dashboard/gas-tank/alert", { threshold: bad });
      expect(r.status).toBe(400);
      expect(r.html).toContain("Enter the alert threshold in USDT with at most 6 decimals, e.g. 25 or 12.345678");
    }
    const kept = await svc.deps.db.pool.query(`SELECT gas_tank_alert_micros::text AS a FROM merchants WHERE id = $1`, [a.id]);
    expect(kept.rows[0].a).toBe("20000000");

    const cleared = await a.browser.submit("/dashboard/gas-tank", "/dashboard/gas-tank/alert", { threshold: "  " });
    expect(cleared.location).toBe("/dashboard/gas-tank?alert=cleared");
    const none = await svc.deps.db.pool.query(`SELECT gas_tank_alert_micros AS a FROM merchants WHERE id = $1`, [a.id]);
    expect(none.rows[0].a).toBeNull();
  });

  it("warns on every screen while the balance is below the alert threshold, linking to the Gas Tank", async () => {
    const a = await signedIn(svc, "Tank Banner");
    const b = await signedIn(svc, "Tank Other");
    await entry(a.id, "gas_tank_deposit", 5_000_000n, 1);
    // No threshold: no banner, whatever the balance.
    for (const path of SCREENS) expect(banner((await a.browser.get(path)).html), path).toBeNull();

    const saved = await a.browser.submit("/dashboard/gas-tank", "/dashboard/gas-tank/alert", { threshold: "20" });
    expect(saved.status).toBe(303);
    for (const path of SCREENS) {
      const page = await a.browser.get(path);
      expect(page.status, path).toBe(200);
      expect(banner(page.html), path).toBe(
        'Your Gas Tank holds 5.000000 USDT, below your alert threshold of 20.000000 USDT: settlements wait when it runs dry. <a href="/dashboard/gas-tank">Top up the Gas Tank</a>',
      );
    }
    // The Gas Tank screen says it in its own words, once.
    const own = await a.browser.get("/dashboard/gas-tank");
    expect(banner(own.html)).toBeNull();
    expect(own.html).toContain('data-testid="low-balance"');
    // Another merchant (no threshold) sees none of it.
    expect(banner((await b.browser.get("/dashboard/payments")).html)).toBeNull();
    // Its own threshold counts against its own balance only: above it, no banner; below it, its own figures.
    await entry(b.id, "gas_tank_deposit", 2_000_000n, 1);
    await svc.deps.db.pool.query(`UPDATE merchants SET gas_tank_alert_micros = 1000000 WHERE id = $1`, [b.id]);
    expect(banner((await b.browser.get("/dashboard/payments")).html)).toBeNull();
    await svc.deps.db.pool.query(`UPDATE merchants SET gas_tank_alert_micros = 3000000 WHERE id = $1`, [b.id]);
    expect(banner((await b.browser.get("/dashboard/payments")).html)).toContain(
      "holds 2.000000 USDT, below your alert threshold of 3.000000 USDT",
    );

    // Topped up to the threshold exactly: not below it, the banner goes.
    await entry(a.id, "gas_tank_deposit", 15_000_000n, 0);
    expect(banner((await a.browser.get("/dashboard/payments")).html)).toBeNull();
    // A settlement fee takes it below again.
    await entry(a.id, "settlement_fee", -1n, 0);
    expect(banner((await a.browser.get("/dashboard/api-keys")).html)).toContain("holds 19.999999 USDT");
  });

  it("takes the status of a refused threshold from the mounting app's error mapping", async () => {
    const a = await signedIn(svc, "Tank Status", { browser: dashboardWith(svc.deps) });
    const r = await a.browser.submit("/dashboard/gas-tank", "/dashboard/gas-tank/alert", { threshold: "1e3" });
    expect(r.status).toBe(ODD_STATUS.invalid);
    expect(r.html).toContain("Enter the alert threshold in USDT with at most 6 decimals, e.g. 25 or 12.345678");
  });

  it("merchant B's page shows none of A's balance, addresses or ledger", async () => {
    const a = await signedIn(svc, "Tank Alpha");
    const b = await signedIn(svc, "Tank Beta");
    await entry(a.id, "gas_tank_deposit", 987_654_321n, 1);
    const aBalance = await svc.http("GET", "/balance", { apiKey: a.apiKey });
    const bPage = await b.browser.get("/dashboard/gas-tank");
    expect(bPage.status).toBe(200);
    expect(text(bPage.html, "gas-balance")).toBe("0.000000");
    expect(bPage.html).not.toContain("987.654321");
    for (const d of aBalance.body.depositAddresses) expect(bPage.html).not.toContain(d.address);
    expect(bPage.html).not.toContain('data-testid="ledger-row"');
  });
});
