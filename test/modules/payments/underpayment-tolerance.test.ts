import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getAddress, parseUnits, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { signedIn, unescapeHtml } from "../../web/dashboard/forms.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { paymentKit, type Shop } from "../../helpers/payment-kit.js";
import { PAYMENT_EVENTS } from "../../../modules/webhooks/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Underpayment tolerance (docs/payments.md "Underpayment tolerance") on the real stack: the merchant's setting over HTTP, payments
// created over HTTP and paid short on Anvil, indexed by Ponder, detected and settled by the processors. A payment short
// by no more than its tolerance completes with the shortfall on the row and in the payment.completed webhook; without
// a tolerance, or short by more, it stays pending. The tolerance is fixed on the payment when it is created.
//
// Every payment here is 10 USDT on the service chain in gasless mode: the sweep takes the fees from the payment (0.10
// processing; no gas fee on the service chain; the platform fee is waived by a new merchant's promotion), so no Gas
// Tank is needed and the merchant's wallet shows exactly what arrived less the fees.

const CHAIN = 777177;
const PATH = "/v1/settings/underpayment-tolerance";
// Generous: on a loaded 2-core machine Ponder can take tens of seconds to index a block.
const WAIT = { timeout: 120_000 };
const FINAL = ["completed", "failed", "withdrawn", "cancelled"];

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.stop());
vi.setConfig({ testTimeout: 300_000 });

const kit = paymentKit(() => svc, CHAIN);
const h = () => chainHelpers(svc.deps.chains.find((c) => c.chainId === CHAIN)!);
const usdt = () => getAddress(h().token("USDT").address);
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const usdtUnits = (s: string) => parseUnits(s, 6);

/** A merchant of kit.shop's kind (subscribed to every payment event) that is also signed in to the dashboard. */
async function dashboardShop(name: string) {
  const m = await signedIn(svc, name);
  const res = await svc.http("PUT", "/v1/webhooks", {
    apiKey: m.apiKey,
    body: { url: "https://127.0.0.1:9/hooks", events: [...PAYMENT_EVENTS] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return m;
}
/** The dashboard's "Underpayment accepted" fact of a payment's page, or null when the page has none. */
async function underpaymentFact(m: Awaited<ReturnType<typeof dashboardShop>>, id: string) {
  const page = await m.browser.get(`/dashboard/payments/${id}`);
  expect(page.status).toBe(200);
  const html = unescapeHtml(page.html);
  expect(html).toContain("Overpayment</dt>"); // the facts are there
  return /Underpayment accepted<\/dt>\s*<dd>([^<]*)<\/dd>/.exec(html)?.[1] ?? null;
}

async function putTolerance(m: Shop, body: unknown) {
  const res = await svc.http("PUT", PATH, { apiKey: m.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}
/** 10 USDT, gasless, paid out to `to`. */
const create10 = (m: Shop, to: Address = payout()) => kit.create(m, { merchant: to, amount: "10", gasless: true });
/** Pays `amount` USDT to the payment's address. */
async function pay(id: string, amount: string) {
  await h().pay("USDT", (await kit.row(id)).recipient_address as Address, usdtUnits(amount));
}
/** Waits (on the database) for the payment to reach `status`; fails at once on another final status. */
async function until(id: string, status: string) {
  await waitFor(
    async () => {
      const now = (await kit.row(id)).status;
      if (now !== status && FINAL.includes(now)) throw new Error(`payment ${id} is ${now}, not ${status}`);
      return now === status;
    },
    { ...WAIT, what: `payment ${id} to be ${status}` },
  );
  return kit.row(id);
}
/** Waits until the detector has recorded `amount` received (the pass that records it is the one that judges it). */
async function received(id: string, amount: string) {
  const units = usdtUnits(amount).toString();
  await waitFor(async () => (await kit.row(id)).received_units === units, { ...WAIT, what: `${amount} recorded on ${id}` });
  return kit.row(id);
}
async function transitions(id: string) {
  const { rows } = await svc.deps.db.pool.query(`SELECT to_status, reason FROM payment_events WHERE payment_id = $1 ORDER BY id`, [id]);
  return rows as { to_status: string; reason: string }[];
}
/** The payment's outbox rows, oldest first: the payload and the exact bytes that are delivered (`body`). */
async function outbox(id: string) {
  const { rows } = await svc.deps.db.pool.query(
    `SELECT event, payload, body FROM webhook_deliveries WHERE payment_id = $1 ORDER BY created_at, event`,
    [id],
  );
  return rows as { event: string; payload: Record<string, any>; body: string }[];
}
/** Every fee the sweep takes from a gasless payment, from its row. */
const feesOf = (r: Record<string, any>) =>
  BigInt(r.platform_fee_units) + BigInt(r.agent_fee_units) + BigInt(r.gas_fee_units) + BigInt(r.processing_fee_units);

describe("a payment short within the tolerance completes", () => {
  it("0.3% short under a 0.5% tolerance: completed, 0.03 underpayment on the row and in payment.completed", async () => {
    const m = await dashboardShop("Tolerant");
    expect(await putTolerance(m, { bps: 50 })).toEqual({ bps: 50, amounts: [] });
    const to = payout();
    const id = await create10(m, to);
    const created = await kit.row(id);
    // 50 bps of 10 USDT, fixed on the payment.
    expect(created).toMatchObject({ due_units: "10000000", underpayment_tolerance_units: "50000", underpayment_units: "0" });

    await pay(id, "9.97");
    const done = await until(id, "completed");
    expect(done).toMatchObject({ received_units: "9970000", underpayment_units: "30000", overpayment_units: "0" });
    expect(await transitions(id)).toEqual([
      { to_status: "paid", reason: "payment received within the underpayment tolerance" },
      { to_status: "deploying_wallet", reason: "settlement reserved" },
      expect.objectContaining({ to_status: "completed" }),
    ]);
    // The sweep moved what arrived: the merchant gets it less the fees, to the smallest unit.
    expect(await h().balanceOf("USDT", to)).toBe(9_970_000n - feesOf(done));
    expect(await h().balanceOf("USDT", done.recipient_address)).toBe(0n);

    const events = await outbox(id);
    expect(events.map((e) => e.event)).toEqual(["payment.completed"]);
    expect(events[0]!.payload).toMatchObject({
      event: "payment.completed",
      paymentId: id,
      status: "completed",
      amount: "10",
      receivedAmount: "9.97",
      underpayment: "0.03",
    });
    expect(events[0]!.payload).not.toHaveProperty("overpayment");
    // The bytes the dispatcher sends carry it too.
    expect(JSON.parse(events[0]!.body)).toMatchObject({ underpayment: "0.03", receivedAmount: "9.97" });

    // The merchant's list shows what arrived.
    const list = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(done.order_id)}`, { apiKey: m.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.data[0]).toMatchObject({ paymentId: id, status: "completed", amount: "10", receivedAmount: "9.97" });
    // The dashboard shows the shortfall accepted.
    expect(await underpaymentFact(m, id)).toBe("0.03 USDT");
  });

  it("exactly at the tolerance completes; short by more stays pending until the rest arrives", async () => {
    const m = await kit.shop("Tolerant, strict edge");
    await putTolerance(m, { bps: 50 });
    const to = payout();
    const id = await create10(m, to);
    // 0.06 short, above the 0.05 tolerance: recorded, not paid.
    await pay(id, "9.94");
    expect(await received(id, "9.94")).toMatchObject({ status: "pending", underpayment_units: "0", paid_at: null });
    expect(await transitions(id)).toEqual([]);
    expect(await outbox(id)).toEqual([]);
    // 0.01 more: 9.95, short by exactly the tolerance.
    await pay(id, "0.01");
    const done = await until(id, "completed");
    expect(done).toMatchObject({ received_units: "9950000", underpayment_units: "50000" });
    expect(await h().balanceOf("USDT", to)).toBe(9_950_000n - feesOf(done));
    expect((await outbox(id))[0]!.payload).toMatchObject({ event: "payment.completed", receivedAmount: "9.95", underpayment: "0.05" });
  });
});

describe("without a tolerance (the spec's behaviour)", () => {
  it("the same 0.3% short payment stays pending with 9.97 received, and completes with the rest, no underpayment", async () => {
    const m = await dashboardShop("Strict");
    const get = await svc.http("GET", PATH, { apiKey: m.apiKey });
    expect(get).toMatchObject({ status: 200, body: { bps: 0, amounts: [] } });
    const to = payout();
    const id = await create10(m, to);
    expect((await kit.row(id)).underpayment_tolerance_units).toBe("0");

    await pay(id, "9.97");
    expect(await received(id, "9.97")).toMatchObject({ status: "pending", underpayment_units: "0", paid_at: null });
    expect(await transitions(id)).toEqual([]);
    expect(await outbox(id)).toEqual([]);

    await pay(id, "0.03");
    const done = await until(id, "completed");
    expect(done).toMatchObject({ received_units: "10000000", underpayment_units: "0", overpayment_units: "0" });
    expect((await transitions(id))[0]).toEqual({ to_status: "paid", reason: "payment received in full" });
    expect(await h().balanceOf("USDT", to)).toBe(10_000_000n - feesOf(done));
    const events = await outbox(id);
    expect(events.map((e) => e.event)).toEqual(["payment.completed"]);
    expect(events[0]!.payload).toMatchObject({ receivedAmount: "10" });
    expect(events[0]!.payload).not.toHaveProperty("underpayment");
    // No "Underpayment accepted 0 USDT" line: only a payment accepted short has one.
    expect(await underpaymentFact(m, id)).toBeNull();
  });
});

describe("withdraw: a payment received within its tolerance is not partial", () => {
  // The threshold itself (9.95 of 10 under 0.5% is paid, 9.949999 is partial) is tolerance.test.ts's; the API's withdraw
  // and the dashboard's button follow that one rule (tolerance.ts isPartialPayment). Here on real payments: one unit
  // more short than the tolerance stays pending and may be withdrawn; a payment within it completes and may not.
  it("one unit short of the threshold is partial (button, withdraw 200); within it, completed and 409", async () => {
    const m = await dashboardShop("Tolerant withdraw");
    await putTolerance(m, { bps: 50 });
    const withdraw = (id: string) => svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: m.apiKey });
    const button = async (id: string) => (await m.browser.get(`/dashboard/payments/${id}`)).html.includes('data-testid="withdraw"');

    const short = await create10(m);
    await pay(short, "9.949999");
    expect((await received(short, "9.949999")).status).toBe("pending");
    expect(await button(short)).toBe(true);
    const res = await withdraw(short);
    expect([res.status, res.body]).toEqual([
      200,
      { success: true, error: null, data: { paymentId: short, status: "withdraw_request", receivedAmount: "9.949999" } },
    ]);

    const within = await create10(m);
    await pay(within, "9.95");
    await until(within, "completed");
    expect(await button(within)).toBe(false);
    const refused = await withdraw(within);
    expect([refused.status, refused.body]).toEqual([
      409,
      { success: false, error: "Payment has no partial payment to withdraw", data: null },
    ]);
    expect((await kit.row(within)).status).toBe("completed");
  });
});

describe("the tolerance is fixed when the payment is created", () => {
  it("lowering the setting does not stop an existing payment completing short; raising it does not let one through", async () => {
    const m = await kit.shop("Snapshot");
    const before = await create10(m); // created under the default: 0
    await putTolerance(m, { bps: 50 });
    const under50 = await create10(m);
    expect((await kit.row(before)).underpayment_tolerance_units).toBe("0");
    expect((await kit.row(under50)).underpayment_tolerance_units).toBe("50000");

    // Lowered to 0 after creation: the payment created under 50 bps still completes 0.03 short.
    await putTolerance(m, { bps: 0 });
    expect((await kit.row(under50)).underpayment_tolerance_units).toBe("50000");
    await pay(under50, "9.97");
    expect(await until(under50, "completed")).toMatchObject({ received_units: "9970000", underpayment_units: "30000" });

    // Raised to 500 bps after creation: the payment created under 0 still needs the full amount.
    await putTolerance(m, { bps: 500 });
    await pay(before, "9.97");
    expect(await received(before, "9.97")).toMatchObject({ status: "pending", underpayment_tolerance_units: "0", underpayment_units: "0" });
    expect(await transitions(before)).toEqual([]);
  });

  it("absolute amounts per token; the larger of the two applies; capped so the fees and one unit still arrive", async () => {
    const m = await kit.shop("Absolute");
    const usdc = getAddress(h().token("USDC").address);
    const set = await putTolerance(m, { bps: 10, amounts: [{ chainId: String(CHAIN), token: usdt().toLowerCase(), amount: "0.05" }] });
    expect(set).toEqual({
      bps: 10,
      amounts: [{ chainId: String(CHAIN), token: usdt(), symbol: "USDT", decimals: 6, amount: "0.05" }],
    });
    expect((await svc.http("GET", PATH, { apiKey: m.apiKey })).body).toEqual(set);
    // USDT: max(10 bps of 10 = 0.01, 0.05) = 0.05. USDC has no absolute amount: 10 bps = 0.01.
    expect((await kit.row(await create10(m))).underpayment_tolerance_units).toBe("50000");
    const inUsdc = await kit.create(m, { merchant: payout(), amount: "10", gasless: true, token: usdc });
    expect((await kit.row(inUsdc)).underpayment_tolerance_units).toBe("10000");
    // A 20 USDT absolute tolerance on a 10 USDT gasless payment: at most due - fees - 1 unit may be missing.
    await putTolerance(m, { bps: 0, amounts: [{ chainId: String(CHAIN), token: usdt(), amount: "20" }] });
    const capped = await kit.row(await create10(m));
    expect(BigInt(capped.underpayment_tolerance_units)).toBe(10_000_000n - feesOf(capped) - 1n);
    // Replaced whole: no amounts now.
    expect(await putTolerance(m, { bps: 25 })).toEqual({ bps: 25, amounts: [] });
  });
});

describe("PUT /v1/settings/underpayment-tolerance refuses bad input with the exact message", () => {
  it("400 `{error}` for each problem, 401 without a key; nothing changes on a refusal", async () => {
    const m = await kit.shop("Validation");
    await putTolerance(m, { bps: 40 });
    const entry = (over: Record<string, unknown>) => ({ chainId: String(CHAIN), token: usdt(), amount: "1", ...over });
    const cases: [unknown, string][] = [
      [[], "Invalid request body"],
      ["50", "Invalid request body"],
      [{}, "bps must be a whole number of basis points between 0 and 500"],
      [{ bps: 501 }, "bps must be a whole number of basis points between 0 and 500"],
      [{ bps: -1 }, "bps must be a whole number of basis points between 0 and 500"],
      [{ bps: 1.5 }, "bps must be a whole number of basis points between 0 and 500"],
      [{ bps: "50" }, "bps must be a whole number of basis points between 0 and 500"],
      [{ bps: 501, color: "red" }, "Unknown field: color"],
      [{ bps: 0, amounts: "1" }, "amounts must be an array of {chainId, token, amount}"],
      [{ bps: 0, amounts: ["1"] }, "amounts must be an array of {chainId, token, amount}"],
      [{ bps: 0, amounts: [entry({ extra: 1 })] }, "Unknown field: extra"],
      [{ bps: 0, amounts: [entry({ chainId: CHAIN })] }, "chainId must be a chain id string"],
      [{ bps: 0, amounts: [entry({ token: "0x123" })] }, "Invalid Token address format"],
      [{ bps: 0, amounts: [entry({ amount: "0" })] }, "amount must be a positive decimal string"],
      [{ bps: 0, amounts: [entry({ amount: "-1" })] }, "amount must be a positive decimal string"],
      [{ bps: 0, amounts: [entry({ amount: "1e3" })] }, "amount must be a positive decimal string"],
      [{ bps: 0, amounts: [entry({ amount: 1 })] }, "amount must be a positive decimal string"],
      [{ bps: 0, amounts: [entry({ chainId: "999999" })] }, "Unsupported network"],
      [{ bps: 0, amounts: [entry({ token: payout() })] }, "Unsupported token"],
      [{ bps: 0, amounts: [entry({ amount: "0.0000001" })] }, "amount must have at most 6 fraction digits for USDT"],
      [{ bps: 0, amounts: [entry({}), entry({ token: usdt().toLowerCase(), amount: "2" })] }, "amounts lists a token twice"],
      [{ bps: 0, amounts: Array.from({ length: 101 }, () => entry({})) }, "amounts may list at most 100 tokens"],
    ];
    for (const [body, error] of cases) {
      const res = await svc.http("PUT", PATH, { apiKey: m.apiKey, body });
      expect({ status: res.status, body: res.body }, JSON.stringify(body).slice(0, 120)).toEqual({ status: 400, body: { error } });
    }
    const badJson = await svc.http("PUT", PATH, { apiKey: m.apiKey, body: "{" });
    expect({ status: badJson.status, body: badJson.body }).toEqual({ status: 400, body: { error: "Invalid JSON body" } });
    for (const [method, body] of [
      ["GET", undefined],
      ["PUT", { bps: 10 }],
    ] as const) {
      const res = await svc.http(method, PATH, { body });
      expect({ status: res.status, body: res.body }, method).toEqual({ status: 401, body: { error: "Unauthorized" } });
      const bad = await svc.http(method, PATH, { body, apiKey: "not-a-key" });
      expect(bad.status, method).toBe(401);
    }
    expect((await svc.http("GET", PATH, { apiKey: m.apiKey })).body).toEqual({ bps: 40, amounts: [] });
  });
});

describe("npm run cli -- merchant tolerance", () => {
  const run = promisify(execFile);
  /** Runs the CLI against the test's schema; never rejects. */
  async function cli(...args: string[]) {
    try {
      const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "cli/index.ts", ...args], {
        env: { ...process.env, ...svc.deps.env },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  it("shows, sets and clears the setting through the API's checks", async () => {
    const m = await kit.shop("CLI");
    const shown = await cli("merchant", "tolerance", "--merchant", m.id);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual({ bps: 0, amounts: [] });

    const set = await cli("merchant", "tolerance", "--merchant", m.id, "--bps", "30");
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ bps: 30, amounts: [] });
    const byToken = (amount: string) => ["--chain", String(CHAIN), "--token", usdt(), "--amount", amount];
    const withAmount = await cli("merchant", "tolerance", "--merchant", m.id, ...byToken("0.5"));
    expect(withAmount.code, withAmount.stderr).toBe(0);
    expect(JSON.parse(withAmount.stdout)).toEqual({
      bps: 30,
      amounts: [{ chainId: String(CHAIN), token: usdt(), symbol: "USDT", decimals: 6, amount: "0.5" }],
    });
    expect((await svc.http("GET", PATH, { apiKey: m.apiKey })).body).toEqual(JSON.parse(withAmount.stdout));
    const cleared = await cli("merchant", "tolerance", "--merchant", m.id, ...byToken("0"));
    expect(JSON.parse(cleared.stdout)).toEqual({ bps: 30, amounts: [] });

    const refused = await cli("merchant", "tolerance", "--merchant", m.id, "--bps", "501");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("bps must be a whole number of basis points between 0 and 500");
    expect((await svc.http("GET", PATH, { apiKey: m.apiKey })).body).toEqual({ bps: 30, amounts: [] });
  });
});
