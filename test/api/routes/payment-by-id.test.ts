import { randomUUID } from "node:crypto";
import { zeroAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatAmount, parseAmount } from "../../../core/money.js";
import { createApiKey } from "../../../modules/merchants/index.js";
import { createTerminal } from "../../../modules/terminals/index.js";
import { driveTo } from "../../modules/payments/fixtures/payment-states.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Issue 35, "API completeness": GET /v1/payments/{paymentId} (one payment, exactly an item of GET /v1/payments, in the
// list's bodies; another merchant's payment is 404) and the extension fields of POST /payments' answer.
let svc: TestService;
let A: { id: string; apiKey: string; email: string; password: string };
let B: { id: string; apiKey: string };

beforeAll(async () => {
  svc = await startTestService({ processors: false });
  const email = `one-${randomUUID().slice(0, 8)}@example.com`;
  const password = "correct horse battery staple";
  A = { ...(await svc.newMerchant({ email, password })), email, password };
  B = await svc.newMerchant();
});
afterAll(() => svc?.stop());

const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const token = (chainId: number, symbol: string) =>
  svc.deps.chains.find((c) => c.chainId === chainId)!.tokens.find((t) => t.symbol === symbol)!;
const body = (over: Record<string, unknown> = {}) => ({
  merchant: payout(),
  chainId: "777177",
  token: token(777177, "USDT").address,
  amount: "12.5",
  orderId: `order-${randomUUID()}`,
  ...over,
});
async function create(apiKey: string, b: Record<string, unknown>) {
  const res = await svc.http("POST", "/payments", { body: b, apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { url: string; paymentId: string; expiresAt: number; amountDue: string };
}
const getOne = (id: string, apiKey?: string, headers: Record<string, string> = {}) =>
  svc.http("GET", `/v1/payments/${id}`, { apiKey, headers });
async function listItem(apiKey: string, orderId: string) {
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(orderId)}`, { apiKey });
  expect(res.status).toBe(200);
  expect(res.body.data).toHaveLength(1);
  return res.body.data[0];
}

describe("GET /v1/payments/{paymentId}", () => {
  it("answers {data} with exactly the list's item, for every kind of payment", async () => {
    await createTerminal(svc.deps.db, A.id, "DESK1", "Front desk");
    const cases = [
      body(),
      body({
        token: token(777177, "USDC").address,
        amount: "0.000001",
        description: "Two coffees",
        redirectUrl: "https://shop.example/thanks",
        expiresAt: svc.clock.now() + 3_600_000,
        blockConfirmations: 5,
        gasless: true,
        payerCoversFee: true,
      }),
      body({ chainId: "137", token: zeroAddress, amount: "1.000000000000000001" }),
      body({ orderId: `POS-DESK1-alice-${Date.now()}` }),
    ];
    for (const b of cases) {
      const { paymentId } = await create(A.apiKey, b);
      const res = await getOne(paymentId, A.apiKey);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(Object.keys(res.body)).toEqual(["data"]);
      expect(res.body.data).toEqual(await listItem(A.apiKey, b.orderId));
      expect(res.body.data.paymentId).toBe(paymentId);
    }
    const pos = (await getOne((await listItem(A.apiKey, cases[3]!.orderId)).paymentId, A.apiKey)).body.data;
    expect(pos.terminal).toEqual({ terminalId: expect.any(String), code: "DESK1", name: "Front desk" });
  });

  it("a completed payment: transaction, completedAt, settlement hash and receivedAmount as in the list", async () => {
    const b = body({ amount: "7" });
    const { paymentId } = await create(A.apiKey, b);
    const blockNumber = 2 ** 40; // far above the head: 0 confirmations, stable while blocks are mined
    await driveTo(svc.deps, paymentId, "completed", {
      paid: {
        received_units: "7000000",
        payment_tx_hash: `0x${"ab".repeat(32)}`,
        payment_block_number: String(blockNumber),
        received_block_number: String(blockNumber),
      },
      completed: { settlement_tx_hash: `0x${"cd".repeat(32)}` },
    });
    const one = (await getOne(paymentId, A.apiKey)).body.data;
    expect(one).toEqual(await listItem(A.apiKey, b.orderId));
    expect(one).toMatchObject({
      status: "completed",
      receivedAmount: "7",
      transaction: { hash: `0x${"ab".repeat(32)}`, blockNumber, confirmations: 0 },
      settlementTransactionHash: `0x${"cd".repeat(32)}`,
      completedAt: expect.any(Number),
    });
  });

  it("another merchant's id, an unknown id and a malformed id are all 404 {error, code} Payment not found", async () => {
    const { paymentId } = await create(A.apiKey, body());
    const notFound = { status: 404, body: { error: "Payment not found", code: "not_found" } };
    for (const [id, apiKey] of [
      [paymentId, B.apiKey],
      [randomUUID(), A.apiKey],
      ["not-a-uuid", A.apiKey],
      [paymentId.toUpperCase().replace(/-/g, ""), A.apiKey],
      ["%00", A.apiKey],
      [`${paymentId}'--`, A.apiKey],
    ] as const) {
      const res = await getOne(id, apiKey);
      expect({ status: res.status, body: res.body }, id).toEqual(notFound);
    }
    // The owner's other keys see it; B still does not, with any of its keys.
    const second = (await createApiKey(svc.deps.db, A.id, "second")).key;
    expect((await getOne(paymentId, second)).status).toBe(200);
    const bSecond = (await createApiKey(svc.deps.db, B.id, "second")).key;
    expect((await getOne(paymentId, bSecond)).status).toBe(404);
  });

  it("no key, an unknown key or a revoked key -> 401 {error, code: unauthorized}, before the id is looked at", async () => {
    const { paymentId } = await create(A.apiKey, body());
    const revoked = await createApiKey(svc.deps.db, A.id, "revoked");
    await svc.deps.db.pool.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [revoked.id]);
    for (const apiKey of [undefined, "not-a-key", `${A.apiKey}x`, revoked.key])
      for (const id of [paymentId, "not-a-uuid"]) {
        const res = await getOne(id, apiKey);
        expect({ status: res.status, body: res.body }, `${apiKey} ${id}`).toEqual({
          status: 401,
          body: { error: "Unauthorized", code: "unauthorized" },
        });
      }
  });

  it("the dashboard's session cookie works in place of the key, as on the list", async () => {
    const { paymentId } = await create(A.apiKey, body());
    const login = await svc.http("POST", "/auth/login", {
      body: { email: A.email, password: A.password },
      headers: { "x-forwarded-for": "198.18.35.1" },
    });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const cookie = login.headers
      .getSetCookie()
      .find((c) => c.startsWith("cp_session="))!
      .split(";")[0]!;
    expect((await getOne(paymentId, undefined, { cookie })).body.data.paymentId).toBe(paymentId);
    expect((await getOne((await create(B.apiKey, body())).paymentId, undefined, { cookie })).status).toBe(404);
    expect((await getOne(paymentId, undefined, { cookie: "cp_session=forged" })).status).toBe(401);
  });
});

describe("POST /payments: the extension fields", () => {
  it("answers {url, paymentId, expiresAt, amountDue}: url as before, the rest as GET shows the payment", async () => {
    const before = svc.clock.now();
    const b = body({ amount: "12.345678" });
    const created = await create(A.apiKey, b);
    expect(Object.keys(created)).toEqual(["url", "paymentId", "expiresAt", "amountDue"]);
    expect(created.url).toBe(`${svc.deps.config.appUrl}/pay/${created.paymentId}`);
    const one = (await getOne(created.paymentId, A.apiKey)).body.data;
    expect(created.expiresAt).toBe(one.expiresAt);
    expect(created.expiresAt).toBeGreaterThanOrEqual(before + 24 * 3_600_000);
    expect(created.amountDue).toBe("12.345678");

    const expiresAt = svc.clock.now() + 600_000;
    expect((await create(A.apiKey, body({ expiresAt }))).expiresAt).toBe(expiresAt);
  });

  it("amountDue with payerCoversFee: the amount plus every fee, with and without the promotion", async () => {
    // A's first payments run under the free-fee promotion (whether it applies is decided as the payment is written, so
    // what is due is read back); a Member plan merchant has no promotion (what is due is the quote's).
    const member = await svc.newMerchant({ type: "member" });
    for (const apiKey of [A.apiKey, member.apiKey]) {
      const b = body({ amount: "20", payerCoversFee: true });
      const created = await create(apiKey, b);
      const one = (await getOne(created.paymentId, apiKey)).body.data;
      const due = parseAmount("20", 6) + parseAmount(one.fees.totalFee, 6);
      expect(created.amountDue, apiKey).toBe(formatAmount(due, 6));
      expect(parseAmount(created.amountDue, 6)).toBeGreaterThan(parseAmount("20", 6));
      if (apiKey === A.apiKey) expect(one.fees.platformFee).toBe("0");
    }
  });
});
