import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { zeroAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type PaymentStatus, type PaymentRow, redirectHash } from "../../../modules/payments/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { driveTo, type StepColumns } from "./fixtures/payment-states.js";

// GET /payments/verify and the redirect flow (spec "GET /payments/verify", "Redirect verification"):
// public, the hash is the proof. Payments reach their statuses through the state machine (transition(), see
// fixtures/payment-states.ts) without a chain; the lifecycle tests cover real completion on chain.
let svc: TestService;
let merchant: { id: string; apiKey: string };
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  merchant = await svc.newMerchant();
});
afterAll(() => svc?.stop());

const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const usdt = () => svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!;

async function create(over: Record<string, unknown> = {}) {
  const body = { merchant: payout(), chainId: "777177", token: usdt().address, amount: "12.5", orderId: `order-${randomUUID()}`, ...over };
  const res = await svc.http("POST", "/payments", { body, apiKey: merchant.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id = (res.body.url as string).split("/pay/")[1]!;
  return { id, body, row: await row(id) };
}
async function row(id: string): Promise<PaymentRow> {
  return (await svc.deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [id])).rows[0]!;
}
const hashOf = (p: PaymentRow) => redirectHash(svc.deps.config.HASH_SECRET, p);
/** GET /payments/verify with exactly the given query parameters, no API key. */
const verify = (params: Record<string, string>) => svc.http("GET", `/payments/verify?${new URLSearchParams(params)}`);
/** pending -> paid -> deploying_wallet -> completed through transition(), with the columns the service writes. */
const complete = (id: string, extra: StepColumns = {}) => driveTo(svc.deps, id, "completed", extra);

describe("GET /payments/verify: errors", () => {
  it("missing id -> 400 Missing payment ID (also when the hash is missing too, or the id is empty)", async () => {
    for (const params of [{}, { hash: "abc" }, { id: "", hash: "abc" }] as Record<string, string>[]) {
      const res = await verify(params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.body).toMatchObject({ valid: false, verified: false, error: "Missing payment ID" });
      expect(res.body).not.toHaveProperty("payment");
    }
  });

  it("missing hash -> 400 Missing hash", async () => {
    const { id } = await create();
    for (const params of [{ id }, { id, hash: "" }, { id: randomUUID() }] as Record<string, string>[]) {
      const res = await verify(params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.body).toMatchObject({ valid: false, verified: false, error: "Missing hash" });
      expect(res.body).not.toHaveProperty("payment");
    }
  });

  it("unknown payment -> 404 Payment not found (random uuid, non-uuid ids)", async () => {
    const { row: p } = await create();
    for (const id of [randomUUID(), "abc", "1", "' OR 1=1 --", `${p.id}x`, p.id.replace(/-/g, "")]) {
      const res = await verify({ id, hash: hashOf(p) });
      expect(res.status, id).toBe(404);
      expect(res.body).toMatchObject({ valid: false, verified: false, error: "Payment not found" });
      expect(res.body).not.toHaveProperty("payment");
    }
  });

  it("a hash that does not match the payment -> 400 Invalid hash, with no payment data", async () => {
    const a = await create();
    const b = await create();
    const good = hashOf(a.row);
    const flip = (h: string, i: number) => h.slice(0, i) + (h[i] === "0" ? "1" : "0") + h.slice(i + 1);
    for (const hash of [
      flip(good, good.length - 1),
      flip(good, 0),
      good.slice(0, -1),
      `${good}0`,
      hashOf(b.row),
      "abc",
      good.replace(/[0-9a-f]/g, "g"),
      redirectHash("another-secret", a.row),
    ]) {
      const res = await verify({ id: a.id, hash });
      expect(res.status, hash).toBe(400);
      expect(res.body).toEqual({ valid: false, verified: false, error: "Invalid hash" });
    }
  });

  it("the hash is bound to the payment's data: a payment whose amount, order or merchant changed no longer verifies", async () => {
    const { id, row: p } = await create();
    const hash = hashOf(p);
    expect((await verify({ id, hash })).status).toBe(200);
    await svc.deps.db.pool.query(`UPDATE payments SET amount_units = '1' WHERE id = $1`, [id]);
    expect((await verify({ id, hash })).body).toEqual({ valid: false, verified: false, error: "Invalid hash" });
    await svc.deps.db.pool.query(`UPDATE payments SET amount_units = $2, order_id = 'changed' WHERE id = $1`, [id, p.amount_units]);
    expect((await verify({ id, hash })).status).toBe(400);
    await svc.deps.db.pool.query(`UPDATE payments SET order_id = $2, merchant_address = $3 WHERE id = $1`, [id, p.order_id, payout()]);
    expect((await verify({ id, hash })).status).toBe(400);
  });
});

describe("GET /payments/verify: valid hash", () => {
  it("pending payment -> 200 {valid: true, verified: false, payment} with every field; chainId a number; no completedAt", async () => {
    const { id, body, row: p } = await create({ amount: "12.345678" });
    const res = await verify({ id, hash: hashOf(p) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: true,
      verified: false,
      payment: {
        paymentId: id,
        orderId: body.orderId,
        status: "pending",
        amount: "12.345678",
        receivedAmount: "0",
        token: usdt().address,
        chainId: 777177,
        merchant: expect.any(String),
        transactionHash: null,
      },
    });
    expect(res.body.payment.merchant.toLowerCase()).toBe(body.merchant.toLowerCase());
    expect(typeof res.body.payment.chainId).toBe("number");
    expect(typeof res.body.payment.token).toBe("string");
    expect(res.body.payment).not.toHaveProperty("completedAt");
    expect(res.body).not.toHaveProperty("error");
    // The hash is hex; its case does not matter.
    expect((await verify({ id, hash: hashOf(p).toUpperCase() })).body.valid).toBe(true);
    expect((await verify({ id: id.toUpperCase(), hash: hashOf(p) })).body.valid).toBe(true);
  });

  it("native coin: token is the zero address string, chainId 137 a number", async () => {
    const { id, row: p } = await create({ chainId: "137", token: zeroAddress, amount: "0.5" });
    const res = await verify({ id, hash: hashOf(p) });
    expect(res.status).toBe(200);
    expect(res.body.payment).toMatchObject({ token: zeroAddress, chainId: 137, amount: "0.5" });
  });

  it("statuses other than completed are valid but not verified", async () => {
    for (const status of ["paid", "deploying_wallet", "awaiting_gas", "expired", "failed"] as PaymentStatus[]) {
      const { id, row: p } = await create();
      expect((await driveTo(svc.deps, id, status)).status).toBe(status);
      const res = await verify({ id, hash: hashOf(p) });
      expect(res.status, status).toBe(200);
      expect(res.body).toMatchObject({ valid: true, verified: false, payment: { status } });
      expect(res.body.payment).not.toHaveProperty("completedAt");
    }
  });

  it("completed payment -> verified: true and completedAt (Unix ms); the transaction hash and received amount are reported", async () => {
    const { id, row: p } = await create({ amount: "7" });
    const paymentTx = `0x${"ab".repeat(32)}`;
    const settlementTx = `0x${"cd".repeat(32)}`;
    // Paid with 7.5 (what the detector records), then settled (what the settlement records).
    const done = await complete(id, {
      paid: { received_units: "7500000", overpayment_units: "500000", payment_tx_hash: paymentTx },
      completed: { settlement_tx_hash: settlementTx },
    });
    expect(done).toMatchObject({ status: "completed", received_units: "7500000", settlement_tx_hash: settlementTx });
    const res = await verify({ id, hash: hashOf(p) });
    expect(res.status).toBe(200);
    // transactionHash: the settlement's once there is one (the payer's transfer before).
    expect(res.body).toMatchObject({
      valid: true,
      verified: true,
      payment: { paymentId: id, status: "completed", amount: "7", receivedAmount: "7.5", transactionHash: settlementTx },
    });
    expect(typeof res.body.payment.completedAt).toBe("number");
    expect(res.body.payment.completedAt).toBe(done.completed_at!.getTime());
    expect(res.body).not.toHaveProperty("error");
  });
});

describe("redirect verification flow", () => {
  it("after completion the payer is sent to redirectUrl with service, success=true and a hash that verifies", async () => {
    const redirectUrl = "https://shop.example/thanks?order=42&lang=en";
    const { id, row: p } = await create({ redirectUrl });
    // Before completion there is no redirect yet.
    const pending = await svc.http("GET", `/payments/${id}/status`);
    expect(pending.status).toBe(200);
    expect(pending.body.redirectUrl).toBeNull();

    await complete(id);
    const status = await svc.http("GET", `/payments/${id}/status`);
    const target = new URL(status.body.redirectUrl);
    expect(`${target.origin}${target.pathname}`).toBe("https://shop.example/thanks");
    expect(target.searchParams.get("order")).toBe("42");
    expect(target.searchParams.get("lang")).toBe("en");
    expect(target.searchParams.get("service")).toBe(id);
    expect(target.searchParams.get("success")).toBe("true");
    const hash = target.searchParams.get("hash")!;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(hashOf(p));

    // The merchant's check, exactly as the spec describes it.
    const res = await verify({ id: target.searchParams.get("service")!, hash });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: true, verified: true, payment: { paymentId: id, status: "completed" } });
  });

  it("a payer cannot reuse one payment's redirect hash for another payment", async () => {
    const a = await create({ redirectUrl: "https://shop.example/a" });
    const b = await create({ redirectUrl: "https://shop.example/b" });
    await complete(a.id);
    const hashA = new URL((await svc.http("GET", `/payments/${a.id}/status`)).body.redirectUrl).searchParams.get("hash")!;
    expect(await verify({ id: b.id, hash: hashA })).toMatchObject({
      status: 400,
      body: { valid: false, verified: false, error: "Invalid hash" },
    });
  });
});
