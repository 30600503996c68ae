import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, zeroAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { formatAmount } from "../../../core/money.js";
import { PAYMENT_STATUSES } from "../../../modules/payments/index.js";
import { driveTo } from "../../modules/payments/fixtures/payment-states.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { dashboardWith, FormClient, ODD_STATUS, signedIn, unescapeHtml as unescape } from "./forms.js";

// The dashboard's payments screens over HTTP: the list with the filters and pagination of GET /v1/payments,
// a payment's detail (timeline, transactions, fees, redirect hash, deliveries, unexpected funds), manual
// withdraw, cancel and recovery through the same modules as the API, and isolation between two merchants.
let svc: TestService;
let origin: string;
type Shop = Awaited<ReturnType<typeof signedIn>>;
let A: Shop;
let B: Shop;

const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const usdt = () => svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!;
const sql = (text: string, args: unknown[] = []) => svc.deps.db.pool.query(text, args);

const shop = (browser?: FormClient): Promise<Shop> => signedIn(svc, undefined, { browser });

async function create(s: Shop, over: Record<string, unknown> = {}) {
  const orderId = `order-${randomUUID()}`;
  const body = { merchant: payout(), chainId: "777177", token: usdt().address, amount: "1.5", orderId, ...over };
  const res = await svc.http("POST", "/payments", { body, apiKey: s.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: (res.body.url as string).split("/pay/")[1]!, orderId: body.orderId as string };
}

/** The payment ids of a list page, in order. */
const rowIds = (html: string) => [...html.matchAll(/data-testid="payment-row" data-payment-id="([^"]+)"/g)].map((m) => m[1]!);
const statuses = (html: string) => [...html.matchAll(/data-testid="payment-status">([^<]+)</g)].map((m) => m[1]!);
const testIdText = (html: string, id: string) => {
  const m = new RegExp(`data-testid="${id}">([^<]*)<`).exec(html);
  return m ? unescape(m[1]!) : null;
};
const nextLink = (html: string) => {
  const m = /href="([^"]+)" data-testid="next-page"/.exec(html);
  return m ? unescape(m[1]!) : null;
};

beforeAll(async () => {
  svc = await startTestService({ processors: false });
  origin = new URL(svc.url).origin;
  [A, B] = await Promise.all([shop(), shop()]);
});
afterAll(() => svc?.stop());

describe("payments list", () => {
  it("shows the merchant's payments newest first, with filters and cursor pagination; never another merchant's", async () => {
    const a1 = await create(A);
    const a2 = await create(A);
    const a3 = await create(A);
    const b1 = await create(B);
    const { rows } = await sql(`INSERT INTO terminals (merchant_id, code, name) VALUES ($1, 'TILL1', 'Front till') RETURNING id`, [A.id]);
    await sql(`UPDATE payments SET terminal_id = $1 WHERE id = $2`, [rows[0].id, a2.id]);

    const all = await A.browser.get("/dashboard/payments");
    expect(all.status).toBe(200);
    // The same order as the API's list.
    const api = await svc.http("GET", "/v1/payments", { apiKey: A.apiKey });
    expect(rowIds(all.html)).toEqual(api.body.data.map((p: any) => p.paymentId));
    expect(rowIds(all.html)).toEqual([a3.id, a2.id, a1.id]);
    expect(statuses(all.html)).toEqual(["pending", "pending", "pending"]);
    expect(all.html).toContain("1.5 USDT");
    expect(all.html).toContain(a1.orderId);
    expect(all.html).toContain("Front till");
    expect(all.html).toContain(`href="/dashboard/payments/${a1.id}"`);
    expect(all.html).not.toContain(b1.id);
    expect(all.html).not.toContain(b1.orderId);
    // The status filter offers the 13 statuses.
    for (const s of PAYMENT_STATUSES) expect(all.html).toContain(`<option value="${s}">`);

    // Pages of 2: "Next page" carries the cursor and the filters.
    const first = await A.browser.get("/dashboard/payments?limit=2");
    expect(rowIds(first.html)).toEqual([a3.id, a2.id]);
    const next = nextLink(first.html)!;
    expect(next).toMatch(/^\/dashboard\/payments\?limit=2&cursor=/);
    const second = await A.browser.get(next);
    expect(second.status).toBe(200);
    expect(rowIds(second.html)).toEqual([a1.id]);
    expect(nextLink(second.html)).toBeNull();

    const byOrder = await A.browser.get(`/dashboard/payments?orderId=${encodeURIComponent(a2.orderId)}&status=&createdAfter=`);
    expect(byOrder.status).toBe(200);
    expect(rowIds(byOrder.html)).toEqual([a2.id]);
    // Another merchant's orderId finds nothing.
    expect(rowIds((await A.browser.get(`/dashboard/payments?orderId=${encodeURIComponent(b1.orderId)}`)).html)).toEqual([]);
    const none = await A.browser.get("/dashboard/payments?status=completed");
    expect(rowIds(none.html)).toEqual([]);
    expect(none.html).toContain('data-testid="no-payments"');
    const created = (await sql(`SELECT created_at FROM payments WHERE id = $1`, [a2.id])).rows[0].created_at.getTime();
    const window = await A.browser.get(`/dashboard/payments?createdAfter=${created}&createdBefore=${new Date(created).toISOString()}`);
    expect(rowIds(window.html)).toEqual([a2.id]);

    const bList = await B.browser.get("/dashboard/payments");
    expect(rowIds(bList.html)).toEqual([b1.id]);
  });

  it("shows an invalid filter as a 400 notice with the API's message", async () => {
    const cases: [string, string][] = [
      ["status=bogus", `status must be one of ${PAYMENT_STATUSES.join(", ")}`],
      ["createdAfter=2024-02-30", "createdAfter must be an ISO 8601 date-time or Unix ms"],
      ["createdAfter=2024-02-02&createdBefore=2024-02-01", "createdBefore must be >= createdAfter"],
      ["cursor=not-a-cursor", "cursor is not a nextCursor of this list"],
      ["limit=101", "limit must be an integer between 1 and 100"],
    ];
    for (const [query, message] of cases) {
      const page = await A.browser.get(`/dashboard/payments?${query}`);
      expect(page.status, query).toBe(400);
      expect(unescape(page.html)).toContain(message);
      expect(page.html).toContain('role="alert"');
      const api = await svc.http("GET", `/v1/payments?${query}`, { apiKey: A.apiKey });
      expect(api.status).toBe(400);
      expect(api.body).toEqual({ error: message, code: "invalid_query" });
    }
  });

  it("sends a browser without a session to the login page", async () => {
    const page = await new FormClient(origin).get("/dashboard/payments");
    expect(page.status).toBe(303);
    expect(page.location).toBe("/dashboard/login?next=%2Fdashboard%2Fpayments");
  });
});

describe("payment detail", () => {
  it("shows facts, timeline, transactions, fees, the redirect hash that verify accepts, and deliveries", async () => {
    const p = await create(A, { amount: "12.34", redirectUrl: "https://shop.example/return?cart=7", description: "Blue mug" });
    const paymentTx = `0x${"ab".repeat(32)}`;
    const settleTx = `0x${"cd".repeat(32)}`;
    // pending -> paid -> deploying_wallet -> completed through transition() (status, columns and audit rows as the
    // detector and the settler write them), then the sweep's row: the screen shows what is stored.
    const done = await driveTo(svc.deps, p.id, "completed", {
      paid: { payment_tx_hash: paymentTx, payment_block_number: 5, received_block_number: 5 },
      completed: { settlement_tx_hash: settleTx },
    });
    expect(done).toMatchObject({ status: "completed", received_units: done.amount_units, settlement_tx_hash: settleTx });
    const { rows: events } = await sql(`SELECT reason, created_at FROM payment_events WHERE payment_id = $1 ORDER BY id`, [p.id]);
    expect(events).toHaveLength(3);
    const gasTankFee = BigInt(done.gas_tank_fee_micros);
    expect(gasTankFee > 0n).toBe(true); // Gas Tank mode: the fee charged to it, set at creation
    await sql(
      `INSERT INTO settlements (chain_id, signer, nonce, tx_hash, raw_tx, payment_ids, status, block_number)
       VALUES (777177, $1, 999999, $2, '0x', ARRAY[$3]::uuid[], 'mined', 7)`,
      [payout(), settleTx, p.id],
    );
    const { rows: d } = await sql(
      `INSERT INTO webhook_deliveries (merchant_id, event, payment_id, dedupe_key, payload, status, attempts, last_http_status, last_attempt_at)
       VALUES ($1, 'payment.completed', $2, $3, '{}', 'failed', 3, 500, now()) RETURNING id`,
      [A.id, p.id, `test:${randomUUID()}`],
    );

    const page = await A.browser.get(`/dashboard/payments/${p.id}`);
    expect(page.status).toBe(200);
    const html = unescape(page.html);
    expect(html).toContain(p.orderId);
    expect(html).toContain("Blue mug");
    expect(html).toContain("12.34 USDT");
    expect(testIdText(page.html, "payment-status")).toBe("completed");
    // Timeline: creation, then the audit rows in order.
    const timeline = [...html.matchAll(/data-testid="timeline-entry"><strong>([^<]+)<\/strong> <span class="muted">([^<]+)</g)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(timeline.map(([s]) => s)).toEqual(["pending", "pending → paid", "paid → deploying_wallet", "deploying_wallet → completed"]);
    // Each audit row with its time and reason.
    expect(timeline.slice(1).map(([, at]) => at)).toEqual(
      events.map((e) => `${(e.created_at as Date).toISOString().slice(0, 19).replace("T", " ")} UTC`),
    );
    for (const e of events) expect(html).toContain(`<div class="muted">${e.reason}</div>`);
    // Transactions: the payer's transfer and our sweep.
    expect(html).toMatch(new RegExp(`data-kind="payment"><td>payment</td><td class="mono">${paymentTx}</td><td class="num">5</td>`));
    expect(html).toMatch(new RegExp(`data-kind="settlement"><td>settlement</td><td class="mono">${settleTx}</td><td class="num">7</td>`));
    // Fees: the list's fees plus the Gas Tank charge.
    const api = (await svc.http("GET", `/v1/payments?orderId=${p.orderId}`, { apiKey: A.apiKey })).body.data[0];
    expect(html).toContain(`${api.fees.platformFee} USDT (${api.fees.feePercentage}%`);
    expect(html).toContain(`${api.fees.totalFee} USDT`);
    expect(html).toMatch(new RegExp(`Charged to the Gas Tank</dt>\\s*<dd>${formatAmount(gasTankFee, 6).replace(".", "\\.")} USDT</dd>`));

    // The redirect the payer is sent to, and its hash, which GET /payments/verify accepts.
    const url = new URL(testIdText(page.html, "redirect-url")!);
    expect(url.origin + url.pathname).toBe("https://shop.example/return");
    expect(url.searchParams.get("cart")).toBe("7");
    expect(url.searchParams.get("service")).toBe(p.id);
    expect(url.searchParams.get("success")).toBe("true");
    const hash = testIdText(page.html, "redirect-hash")!;
    expect(url.searchParams.get("hash")).toBe(hash);
    const verified = await svc.http("GET", `/payments/verify?id=${p.id}&hash=${hash}`);
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ valid: true, verified: true, payment: { paymentId: p.id, status: "completed" } });

    // The delivery, with a resend form posting to the webhooks screen.
    const row = new RegExp(`data-testid="delivery-row" data-delivery-id="${d[0].id}">([\\s\\S]*?)</tr>`).exec(html)![1]!;
    expect(row).toContain("<td>payment.completed</td>");
    expect(row).toContain('<span class="badge failed">failed</span>');
    expect(row).toContain("3 / 3");
    expect(row).toContain('<td class="num">500</td>');
    expect(row).toContain(`action="/dashboard/webhooks/deliveries/${d[0].id}/resend"`);
    expect(row).toContain('name="_csrf"');
  });

  it("shows the hash without a redirect URL when none was given", async () => {
    const p = await create(A);
    const page = await A.browser.get(`/dashboard/payments/${p.id}`);
    expect(page.status).toBe(200);
    expect(page.html).not.toContain('data-testid="redirect-url"');
    expect(page.html).toContain("No redirect URL was given for this payment.");
    const hash = testIdText(page.html, "redirect-hash")!;
    const verified = await svc.http("GET", `/payments/verify?id=${p.id}&hash=${hash}`);
    expect(verified.body).toMatchObject({ valid: true, verified: false });
  });

  it("withdraws a partial payment through the withdraw module; refuses with its message when there is none", async () => {
    const p = await create(A, { amount: "2" });
    const empty = await A.browser.get(`/dashboard/payments/${p.id}`);
    expect(empty.html).not.toContain('data-testid="withdraw"');
    const nothing = await A.browser.submit(`/dashboard/payments/${p.id}`, `/dashboard/payments/${p.id}/withdraw`, {});
    expect(nothing.status).toBe(409);
    expect(nothing.html).toContain("Payment has no partial payment to withdraw");

    // 0.5 of 2 USDT received (what detection records).
    await sql(`UPDATE payments SET received_units = 500000 WHERE id = $1`, [p.id]);
    const partial = await A.browser.get(`/dashboard/payments/${p.id}`);
    expect(partial.html).toContain('data-testid="withdraw"');
    const res = await A.browser.submit(`/dashboard/payments/${p.id}`, `/dashboard/payments/${p.id}/withdraw`, {});
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/payments/${p.id}?done=withdraw`);
    const after = await A.browser.get(res.location!);
    expect(testIdText(after.html, "payment-status")).toBe("withdraw_request");
    expect(after.html).toContain("Withdrawal requested");
    expect(unescape(after.html)).toContain("pending → withdraw_request");
    expect(after.html).toContain("manual withdraw by the merchant");
    const { rows } = await sql(`SELECT status FROM payments WHERE id = $1`, [p.id]);
    expect(rows[0].status).toBe("withdraw_request");
    const listed = await A.browser.get("/dashboard/payments?status=withdraw_request");
    expect(rowIds(listed.html)).toEqual([p.id]);
    // Asking again: the module's conflict, on the page.
    const again = await A.browser.submit(`/dashboard/payments/${p.id}`, `/dashboard/payments/${p.id}/withdraw`, {});
    expect(again.status).toBe(409);
    expect(again.html).toContain("Payment has no partial payment to withdraw");
  });

  it("cancels a payment that received nothing through the cancel module; refuses a funded or a cancelled one with its message", async () => {
    const funded = await create(A, { amount: "2" });
    // 0.5 of 2 USDT received, through transition() (the detector's expired -> pending with late funds): no Cancel
    // button, and the module's 409 on the page.
    await driveTo(svc.deps, funded.id, "expired");
    await driveTo(svc.deps, funded.id, "pending", {
      pending: { received_units: "500000", payment_tx_hash: `0x${"ab".repeat(32)}`, payment_block_number: "1", received_block_number: "1" },
    });
    const fundedPage = await A.browser.get(`/dashboard/payments/${funded.id}`);
    expect(fundedPage.html).not.toContain('data-testid="cancel"');
    const refused = await A.browser.submit(`/dashboard/payments/${funded.id}`, `/dashboard/payments/${funded.id}/cancel`, {});
    expect(refused.status).toBe(409);
    expect(refused.html).toContain("Payment has received funds: withdraw instead");
    expect((await sql(`SELECT status FROM payments WHERE id = $1`, [funded.id])).rows[0].status).toBe("pending");

    const p = await create(A);
    const page = await A.browser.get(`/dashboard/payments/${p.id}`);
    expect(page.html).toContain('data-testid="cancel"');
    expect(page.html).toContain(`action="/dashboard/payments/${p.id}/cancel"`);
    const res = await A.browser.submit(`/dashboard/payments/${p.id}`, `/dashboard/payments/${p.id}/cancel`, {});
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/payments/${p.id}?done=cancel`);
    const after = await A.browser.get(res.location!);
    expect(testIdText(after.html, "payment-status")).toBe("cancelled");
    expect(after.html).toContain("Payment cancelled.");
    expect(unescape(after.html)).toContain("pending → cancelled");
    expect(after.html).toContain("cancelled by the merchant");
    expect(after.html).not.toContain('data-testid="cancel"');
    const { rows } = await sql(`SELECT status FROM payments WHERE id = $1`, [p.id]);
    expect(rows[0].status).toBe("cancelled");
    expect(rowIds((await A.browser.get("/dashboard/payments?status=cancelled")).html)).toContain(p.id);
    const again = await A.browser.submit(`/dashboard/payments/${p.id}`, `/dashboard/payments/${p.id}/cancel`, {});
    expect(again.status).toBe(409);
    expect(again.html).toContain("Payment cannot be cancelled in status cancelled");
  });

  it("lists unexpected funds and recovers them through the recover module", async () => {
    const p = await create(A);
    const { rows } = await sql(`SELECT recipient_address FROM payments WHERE id = $1`, [p.id]);
    // Native coin on an ERC-20 payment's address is unexpected in any state.
    await svc.deps.clients.get(777177)!.request({
      method: "anvil_setBalance" as any,
      params: [rows[0].recipient_address, `0x${parseEther("0.5").toString(16)}`] as any,
    });
    const page = await A.browser.get(`/dashboard/payments/${p.id}`);
    const row = new RegExp(`data-testid="unexpected-funds-row" data-token="${zeroAddress}">([\\s\\S]*?)</tr>`).exec(page.html)![1]!;
    expect(row).toContain('<td class="num">0.5</td>');
    expect(row).toContain(`action="/dashboard/payments/${p.id}/recover"`);

    const bad = await A.browser.submit(`/dashboard/payments/${p.id}`, `/dashboard/payments/${p.id}/recover`, { token: "nope" });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("Invalid token address format");
    const usdc = svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDC")!.address;
    const empty = await A.browser.submit(`/dashboard/payments/${p.id}`, `/dashboard/payments/${p.id}/recover`, { token: usdc });
    expect(empty.status).toBe(409);
    expect(empty.html).toContain("No unexpected funds to recover in this token");

    // This chain's native coin has no price: its recovery is charged to the Gas Tank (docs/unexpected-funds.md, "Fees").
    const short = await A.browser.submit(`/dashboard/payments/${p.id}`, `/dashboard/payments/${p.id}/recover`, { token: zeroAddress });
    expect(short.status).toBe(409);
    expect(short.html).toContain("Gas Tank balance too low to pay for this recovery");
    await sql(`INSERT INTO ledger_entries (merchant_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', 1000000, $2)`, [
      A.id,
      `test:${randomUUID()}`,
    ]);
    const res = await A.browser.submit(`/dashboard/payments/${p.id}`, `/dashboard/payments/${p.id}/recover`, { token: zeroAddress });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/payments/${p.id}?done=recover`);
    const after = await A.browser.get(res.location!);
    expect(after.html).toContain("Recovery requested");
    expect(testIdText(after.html, "recovery-status")).toBe("requested");
    const rec = await sql(`SELECT merchant_id, token, status, requested_units FROM fund_recoveries WHERE payment_id = $1`, [p.id]);
    expect(rec.rows).toEqual([
      { merchant_id: A.id, token: zeroAddress, status: "requested", requested_units: parseEther("0.5").toString() },
    ]);
    // While it is in flight there is nothing more to ask for.
    expect(after.html).not.toContain(`action="/dashboard/payments/${p.id}/recover"`);
  });
});

describe("isolation between merchants", () => {
  it("another merchant's payment, an unknown and a malformed id are 404, and its actions change nothing", async () => {
    const p = await create(A, { amount: "3" });
    await sql(`UPDATE payments SET received_units = 1000000 WHERE id = $1`, [p.id]);
    for (const path of [`/dashboard/payments/${p.id}`, `/dashboard/payments/${randomUUID()}`, "/dashboard/payments/not-a-uuid"]) {
      const page = await B.browser.get(path);
      expect(page.status, path).toBe(404);
      expect(page.html).toContain("Payment not found");
    }
    const w = await B.browser.submit("/dashboard/payments", `/dashboard/payments/${p.id}/withdraw`, {});
    expect(w.status).toBe(404);
    expect(w.html).toContain("Payment not found");
    const r = await B.browser.submit("/dashboard/payments", `/dashboard/payments/${p.id}/recover`, { token: zeroAddress });
    expect(r.status).toBe(404);
    expect(r.html).toContain("Payment not found");
    const empty = await create(A);
    const c = await B.browser.submit("/dashboard/payments", `/dashboard/payments/${empty.id}/cancel`, {});
    expect(c.status).toBe(404);
    expect(c.html).toContain("Payment not found");
    expect((await sql(`SELECT status FROM payments WHERE id = $1`, [empty.id])).rows[0].status).toBe("pending");
    const { rows } = await sql(`SELECT status FROM payments WHERE id = $1`, [p.id]);
    expect(rows[0].status).toBe("pending");
    expect((await sql(`SELECT 1 FROM fund_recoveries WHERE payment_id = $1`, [p.id])).rowCount).toBe(0);
    expect(rowIds((await B.browser.get("/dashboard/payments")).html)).not.toContain(p.id);
    // A's own view still works.
    expect((await A.browser.get(`/dashboard/payments/${p.id}`)).status).toBe(200);
  });
});

describe("statuses", () => {
  it("takes the status of a refused filter or action from the mounting app's error mapping", async () => {
    const C = await shop(dashboardWith(svc.deps));
    const bad = await C.browser.get("/dashboard/payments?limit=101");
    expect(bad.status).toBe(ODD_STATUS.invalid);
    expect(bad.html).toContain("limit must be an integer between 1 and 100");
    const p = await create(C, { amount: "2" });
    const nothing = await C.browser.submit(`/dashboard/payments/${p.id}`, `/dashboard/payments/${p.id}/withdraw`, {});
    expect(nothing.status).toBe(ODD_STATUS.conflict);
    expect(nothing.html).toContain("Payment has no partial payment to withdraw");
    const missing = await C.browser.get(`/dashboard/payments/${randomUUID()}`);
    expect(missing.status).toBe(ODD_STATUS.not_found);
    expect(missing.html).toContain("Payment not found");
    const foreign = await C.browser.submit("/dashboard/payments", `/dashboard/payments/${(await create(A)).id}/withdraw`, {});
    expect(foreign.status).toBe(ODD_STATUS.not_found);
    expect(foreign.html).toContain("Payment not found");
  });
});
