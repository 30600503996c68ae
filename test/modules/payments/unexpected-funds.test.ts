import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { getAddress, parseEther, parseUnits, zeroAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { paymentState } from "../../helpers/diagnostics.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Unexpected funds (issue 8): another token sent to a payment's address, and funds that arrive after the
// payment completed (its own token, the native coin), and native coin on an open ERC-20 payment, are listed
// on the payment and recovered to the committed payout through REST, GraphQL and the CLI, to the smallest unit.
let svc: TestService;
let merchant: { id: string; apiKey: string };
/** Credits a merchant's Gas Tank (recoveries of tokens without a price are charged to it). */
const fundTank = (merchantId: string, micros: bigint) =>
  svc.deps.db.pool.query(`INSERT INTO ledger_entries (merchant_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', $2, $3)`, [
    merchantId,
    micros.toString(),
    `test-credit:${randomUUID()}`,
  ]);

beforeAll(async () => {
  svc = await startTestService();
  merchant = await svc.newMerchant();
  await fundTank(merchant.id, 1_000_000n);
});
afterAll(() => svc?.stop());
vi.setConfig({ testTimeout: 300_000 });

const WAIT = { timeout: 120_000 };
const chain = () => svc.deps.chains.find((c) => c.chainId === 777177)!;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const run = promisify(execFile);

async function create(body: Record<string, unknown>, apiKey = merchant.apiKey): Promise<{ id: string; orderId: string }> {
  const orderId = `order-${randomUUID()}`;
  const res = await svc.http("POST", "/payments", { body: { orderId, ...body }, apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: (res.body.url as string).split("/pay/")[1]!, orderId };
}
async function get(orderId: string, apiKey = merchant.apiKey) {
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(orderId)}`, { apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data[0];
}
const fundsIn = (p: any, token: string) => (p.unexpectedFunds as any[]).find((f) => f.token === getAddress(token));
const recover = (paymentId: string, token: string, apiKey = merchant.apiKey) =>
  svc.http("POST", `/v1/payments/${paymentId}/recover`, { body: { token }, apiKey });
const gql = (query: string, variables: Record<string, unknown>) =>
  svc.http("POST", "/graphql", { body: { query, variables }, apiKey: merchant.apiKey });
const cli = async (...args: string[]) => {
  const { stdout } = await run(process.execPath, ["--import", "tsx", "cli/index.ts", ...args], {
    env: { ...process.env, ...svc.deps.env },
  });
  return JSON.parse(stdout);
};

describe("unexpected funds on a completed payment", () => {
  it("another token and late funds (token and native) are listed, then recovered to the payout minus a payment's fees, exactly", async () => {
    const h = chainHelpers(chain());
    const usdt = h.token("USDT").address;
    const usdc = h.token("USDC").address;
    const to = payout();
    const { id, orderId } = await create({ merchant: to, chainId: "777177", token: usdt, amount: "10", gasless: true });
    const created = await get(orderId);
    expect(created.unexpectedFunds).toEqual([]);
    const address = created.recipientAddress as Address;
    await h.pay("USDT", address, parseUnits("10", 6));
    await waitFor(async () => (await get(orderId)).status === "completed", {
      ...WAIT,
      what: "completed",
      state: () => paymentState(svc.deps.db, id),
    });
    expect((await get(orderId)).unexpectedFunds).toEqual([]);

    // (a) another registry token, (b) more of the payment's token after completion, (c) native coin.
    await h.pay("USDC", address, parseUnits("2.5", 6));
    await h.pay("USDT", address, parseUnits("1.25", 6));
    await h.sendNative(address, parseEther("0.5"));
    const listed = await waitFor(
      async () => {
        const p = await get(orderId);
        return fundsIn(p, usdc) && fundsIn(p, usdt) && fundsIn(p, zeroAddress) && p;
      },
      { ...WAIT, what: "unexpected funds listed" },
    );
    expect(fundsIn(listed, usdc)).toEqual({
      token: getAddress(usdc),
      symbol: "USDC",
      decimals: 6,
      amount: "2.5",
      units: "2500000",
      recoverable: true,
      recovery: null,
    });
    expect(fundsIn(listed, usdt)).toEqual({
      token: getAddress(usdt),
      symbol: "USDT",
      decimals: 6,
      amount: "1.25",
      units: "1250000",
      recoverable: true,
      recovery: null,
    });
    expect(fundsIn(listed, zeroAddress)).toMatchObject({
      decimals: 18,
      amount: "0.5",
      units: parseEther("0.5").toString(),
      recoverable: true,
    });
    expect(listed.unexpectedFunds).toHaveLength(3);
    // The payment's own fields are untouched.
    expect(listed).toMatchObject({ status: "completed", amount: "10", receivedAmount: "10" });

    // GraphQL shows the same extension field.
    const q = await gql(
      `query ($o: String) { payments(orderId: $o) { data { unexpectedFunds { token symbol decimals amount units recoverable recovery { status } } } } }`,
      { o: orderId },
    );
    expect(q.body.errors).toBeUndefined();
    expect(q.body.data.payments.data[0].unexpectedFunds).toEqual(listed.unexpectedFunds);

    const before = {
      usdc: await h.balanceOf("USDC", to),
      usdt: await h.balanceOf("USDT", to),
      native: await h.pub.getBalance({ address: to }),
    };

    // REST: the other token. Asking twice while it is in flight answers the same recovery.
    const r1 = await recover(id, usdc);
    expect(r1.status, JSON.stringify(r1.body)).toBe(200);
    expect(r1.body).toEqual({
      success: true,
      error: null,
      data: {
        recoveryId: expect.any(String),
        paymentId: id,
        token: getAddress(usdc),
        status: "requested",
        amount: "2.5",
        units: "2500000",
        payout: to,
      },
    });
    const again = await recover(id, usdc.toUpperCase().replace("0X", "0x"));
    expect(again.status).toBe(200);
    expect(again.body.data.recoveryId).toBe(r1.body.data.recoveryId);

    // GraphQL: the late funds in the payment's own token.
    const m = await gql(
      `mutation ($p: String!, $t: String!) { recoverFunds(paymentId: $p, token: $t) { recoveryId status amount units payout } }`,
      {
        p: id,
        t: usdt,
      },
    );
    expect(m.body.errors).toBeUndefined();
    expect(m.body.data.recoverFunds).toMatchObject({ status: "requested", amount: "1.25", units: "1250000", payout: to });

    // CLI: the native coin.
    const c = await cli("payment", "recover", "--merchant", merchant.id, "--payment", id, "--token", zeroAddress);
    expect(c).toMatchObject({ paymentId: id, token: zeroAddress, amount: "0.5", units: parseEther("0.5").toString(), payout: to });

    const done = await waitFor(
      async () => {
        const p = await get(orderId);
        return (p.unexpectedFunds as any[]).every((f) => f.recovery?.status === "recovered" && f.units === "0") && p;
      },
      { ...WAIT, what: "every recovery recovered" },
    );
    expect(fundsIn(done, usdc)).toMatchObject({ amount: "0", units: "0", recoverable: false });
    expect(fundsIn(done, usdc).recovery).toMatchObject({ transactionHash: expect.any(String), gasTankFee: "0" });
    // Each recovery paid what a payment of the same amount would (docs/unexpected-funds.md, "Fees"): at least the
    // merchant's 1% and the 0.10 USD processing fee, in kind, out of the funds; the payout got the rest, exactly.
    const split = (token: string, units: bigint, atLeast: bigint) => {
      const r = fundsIn(done, token).recovery;
      const [fee, got] = [BigInt(r.feeUnits), BigInt(r.recoveredUnits)];
      expect(fee).toBeGreaterThanOrEqual(atLeast);
      expect(fee + got).toBe(units);
      return got;
    };
    const got = {
      usdc: split(usdc, 2_500_000n, 25_000n + 100_000n),
      usdt: split(usdt, 1_250_000n, 12_500n + 100_000n),
      native: parseEther("0.5"),
    };
    // This chain's native coin has no price in the registry: its recovery's processing fee (no gas fee on this chain)
    // came from the Gas Tank, and the payout got the whole amount.
    expect(fundsIn(done, zeroAddress).recovery).toMatchObject({
      feeUnits: "0",
      gasTankFee: "0.1",
      recoveredUnits: parseEther("0.5").toString(),
    });
    expect(fundsIn(done, usdc).recovery.recoveredAmount).toBe((Number(got.usdc) / 1e6).toString());

    // The payout received exactly the rest; the address holds nothing more.
    expect((await h.balanceOf("USDC", to)) - before.usdc).toBe(got.usdc);
    expect((await h.balanceOf("USDT", to)) - before.usdt).toBe(got.usdt);
    expect((await h.pub.getBalance({ address: to })) - before.native).toBe(got.native);
    expect(await h.balanceOf("USDC", address)).toBe(0n);
    expect(await h.balanceOf("USDT", address)).toBe(0n);
    expect(await h.pub.getBalance({ address })).toBe(0n);

    // Nothing left to recover: 409.
    const none = await recover(id, usdc);
    expect(none.status).toBe(409);
    expect(none.body).toEqual({ success: false, error: "No unexpected funds to recover in this token", data: null });
  });
});

describe("recover: errors", () => {
  it("404 for another merchant's or an unknown payment, 400 for a bad token, 409 for the payment's own token while open", async () => {
    const h = chainHelpers(chain());
    const usdt = h.token("USDT").address;
    const usdc = h.token("USDC").address;
    const { id, orderId } = await create({ merchant: payout(), chainId: "777177", token: usdt, amount: "5", gasless: true });
    const p = await get(orderId);

    // Another token on a pending payment is unexpected too (the payment will never move it).
    await h.pay("USDC", p.recipientAddress, parseUnits("0.75", 6));
    const pending = await waitFor(
      async () => {
        const x = await get(orderId);
        return fundsIn(x, usdc) && x;
      },
      { ...WAIT, what: "USDC listed" },
    );
    expect(pending.status).toBe("pending");
    expect(fundsIn(pending, usdc)).toMatchObject({ amount: "0.75", units: "750000", recoverable: true });

    const other = await svc.newMerchant({ name: "Other merchant" });
    expect(await recover(id, usdc, other.apiKey)).toMatchObject({
      status: 404,
      body: { success: false, error: "Payment not found", data: null },
    });
    expect((await recover(randomUUID(), usdc)).status).toBe(404);
    expect((await recover("not-a-uuid", usdc)).status).toBe(404);
    expect(await recover(id, "0x1234")).toMatchObject({
      status: 400,
      body: { success: false, error: "Invalid token address format", data: null },
    });
    expect((await svc.http("POST", `/v1/payments/${id}/recover`, { body: {}, apiKey: merchant.apiKey })).status).toBe(400);
    expect((await svc.http("POST", `/v1/payments/${id}/recover`, { body: { token: usdc } })).status).toBe(401);

    // The payment's own token belongs to the payment while it is open; no funds of a third token: 409.
    await h.pay("USDT", p.recipientAddress, parseUnits("1", 6));
    const own = await recover(id, usdt);
    expect(own).toMatchObject({ status: 409, body: { success: false, error: "No unexpected funds to recover in this token", data: null } });
    // No native coin on the address: 409.
    expect((await recover(id, zeroAddress)).status).toBe(409);
  });
});

describe("native coin on an open ERC-20 payment", () => {
  it("is listed recoverable while the payment is pending and recovered to the payout exactly", async () => {
    const h = chainHelpers(chain());
    const usdt = h.token("USDT").address;
    const to = payout();
    const owner = await svc.newMerchant({ name: "Native on ERC-20" });
    const { id, orderId } = await create({ merchant: to, chainId: "777177", token: usdt, amount: "3", gasless: true }, owner.apiKey);
    const address = (await get(orderId, owner.apiKey)).recipientAddress as Address;
    // The coin is never this payment's asset: it is unexpected although the payment is open (it may never become final).
    await h.sendNative(address, parseEther("0.3"));
    const listed = await waitFor(
      async () => {
        const p = await get(orderId, owner.apiKey);
        return fundsIn(p, zeroAddress) && p;
      },
      { ...WAIT, what: "native coin listed" },
    );
    expect(listed.status).toBe("pending");
    expect(listed.unexpectedFunds).toEqual([
      {
        token: zeroAddress,
        symbol: null,
        decimals: 18,
        amount: "0.3",
        units: parseEther("0.3").toString(),
        recoverable: true,
        recovery: null,
      },
    ]);

    const before = await h.pub.getBalance({ address: to });
    // The coin has no price here: the recovery is charged to the Gas Tank, which is empty: 409, nothing queued.
    const short = await recover(id, zeroAddress, owner.apiKey);
    expect(short).toMatchObject({
      status: 409,
      body: { success: false, error: "Gas Tank balance too low to pay for this recovery", data: null },
    });
    await fundTank(owner.id, 100_000n);
    const r = await recover(id, zeroAddress, owner.apiKey);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({ paymentId: id, token: zeroAddress, status: "requested", amount: "0.3", payout: to });
    const done = await waitFor(
      async () => {
        const p = await get(orderId, owner.apiKey);
        return fundsIn(p, zeroAddress)?.recovery?.status === "recovered" && p;
      },
      { ...WAIT, what: "native coin recovered" },
    );
    expect(fundsIn(done, zeroAddress)).toMatchObject({ amount: "0", units: "0", recoverable: false });
    expect(fundsIn(done, zeroAddress).recovery).toMatchObject({
      recoveredAmount: "0.3",
      recoveredUnits: parseEther("0.3").toString(),
      gasTankFee: "0.1",
    });
    // Each status change of the recovery has its audit row (modules/payments/transition.ts).
    const { rows: trail } = await svc.deps.db.pool.query(
      `SELECT from_status, to_status FROM fund_recovery_events WHERE recovery_id = $1 ORDER BY id`,
      [fundsIn(done, zeroAddress).recovery.recoveryId],
    );
    expect(trail.map((t) => `${t.from_status}->${t.to_status}`)).toEqual([
      "requested->signed",
      "signed->sent",
      "sent->mined",
      "mined->recovered",
    ]);
    const { rows: tank } = await svc.deps.db.pool.query(`SELECT sum(amount_micros)::text AS b FROM ledger_entries WHERE merchant_id = $1`, [
      owner.id,
    ]);
    expect(tank[0].b).toBe("0");
    expect((await h.pub.getBalance({ address: to })) - before).toBe(parseEther("0.3"));
    expect(await h.pub.getBalance({ address })).toBe(0n);
    // The payment itself is untouched and still open.
    expect(done).toMatchObject({ status: "pending", receivedAmount: "0" });
  });
});

describe("recover: rate limit", () => {
  // Stopped time: the bucket refills one recovery every 6 s.
  beforeEach(() => svc.clock.freeze());
  afterEach(() => svc.clock.resume());

  it("allows 10 requests a minute per merchant, REST and GraphQL together, then 429 in the route's envelope", async () => {
    const { apiKey } = await svc.newMerchant({ name: "Rate limited" });
    const other = await svc.newMerchant({ name: "Not rate limited" });
    const usdc = chainHelpers(chain()).token("USDC").address;
    for (let i = 0; i < 10; i++) expect((await recover(randomUUID(), usdc, apiKey)).status).toBe(404);
    const limited = await recover(randomUUID(), usdc, apiKey);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ success: false, error: "Too many requests", data: null });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Per merchant: another merchant's key is not limited.
    expect((await recover(randomUUID(), usdc, other.apiKey)).status).toBe(404);
    // GraphQL's recoverFunds takes from the same bucket (api/middleware/rate-limit.ts).
    const m = (key: string) =>
      svc.http("POST", "/graphql", {
        body: {
          query: `mutation ($p: String!, $t: String!) { recoverFunds(paymentId: $p, token: $t) { status } }`,
          variables: { p: randomUUID(), t: usdc },
        },
        apiKey: key,
      });
    const refused = { message: "Too many requests", extensions: { code: "RATE_LIMITED", http: 429 } };
    expect((await m(apiKey)).body.errors[0]).toMatchObject(refused);
    for (let i = 0; i < 9; i++) expect((await m(other.apiKey)).body.errors[0].extensions.http).toBe(404);
    expect((await m(other.apiKey)).body.errors[0]).toMatchObject(refused);
  });
});
