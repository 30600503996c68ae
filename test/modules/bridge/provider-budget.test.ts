import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  PROVIDER_REQUESTS_PER_MINUTE,
  providerRequestsPerMinute,
  QUOTES_PER_PAYMENT_PER_MINUTE,
  QUOTE_CACHE_TTL_MS,
} from "../../../modules/bridge/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { startDlnFake, type DlnFake } from "./dln-fake.js";

// Quotes were limited only per client address (30 a minute), so 40 addresses got 40 answers, each
// a call to DLN, which allows 50 a minute per endpoint without a key: a few addresses spent the budget of every
// payer. Now what reaches the provider spends one service-wide budget per endpoint (default 40 a minute), each
// payment has a share of the quotes, and the same question within 15 s is answered from a cache.
// The service runs with the default budget; clients are told apart by X-Forwarded-For (loopback is a trusted proxy).

const DST = 777177;
let fake: DlnFake;
let svc: TestService;
let shop: { id: string; apiKey: string };
let ip = 0;
beforeAll(async () => {
  fake = await startDlnFake();
  svc = await startTestService({ processors: false, env: { BRIDGE_API_URL: fake.url } });
  shop = await svc.newMerchant({ name: "Budget shop" });
  svc.clock.freeze(); // buckets count exactly
});
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
});
beforeEach(() => {
  svc.clock.advance(2 * 60_000); // every bucket full again, every cached quote expired
  fake.requests.length = 0;
});

const chain = (id: number) => svc.deps.chains.find((c) => c.chainId === id)!;
const usdc137 = () => chain(137).tokens.find((t) => t.symbol === "USDC")!.address;
const newAddress = () => `10.28.${(++ip >> 8) & 255}.${ip & 255}`;
const payerAddress = () => privateKeyToAccount(generatePrivateKey()).address;
const createTx = () => fake.requests.filter((r) => r.path === "/v1.0/dln/order/create-tx").length;

async function newPayment(): Promise<string> {
  const r = await svc.http("POST", "/payments", {
    apiKey: shop.apiKey,
    body: {
      merchant: payerAddress(),
      chainId: String(DST),
      token: chain(DST).tokens.find((t) => t.symbol === "USDT")!.address,
      amount: "10",
      orderId: `BB-${Math.random()}`,
    },
  });
  expect(r.status).toBe(200);
  return (r.body.url as string).split("/pay/")[1]!;
}

/** A quote asked from client address `from` (a new one by default). */
const quote = (paymentId: string, opts: { payer?: string; from?: string } = {}) =>
  svc.http("GET", `/payments/${paymentId}/bridge/quote?srcChainId=137&srcToken=${usdc137()}${opts.payer ? `&payer=${opts.payer}` : ""}`, {
    headers: { "x-forwarded-for": opts.from ?? newAddress() },
  });

describe("bridge provider budget", () => {
  it("48 addresses quoting 6 payments: the provider is asked 40 times (the default), the rest wait with 503 and Retry-After", async () => {
    expect(svc.deps.config.BRIDGE_PROVIDER_REQUESTS_PER_MINUTE).toBeUndefined();
    expect(providerRequestsPerMinute(svc.deps.config)).toBe(PROVIDER_REQUESTS_PER_MINUTE.keyless);
    const payments = await Promise.all(Array.from({ length: 6 }, newPayment));
    // Each address asks with a payer of its own (no cache hit), 8 per payment (under a payment's share of 10).
    const asked = Array.from({ length: 48 }, (_, i) => ({ paymentId: payments[i % 6]!, payer: payerAddress() }));
    const answers = await Promise.all(asked.map((a) => quote(a.paymentId, { payer: a.payer })));

    expect(createTx()).toBe(40);
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status !== 200);
    expect(ok).toHaveLength(40);
    for (const r of refused) {
      expect([r.status, r.body]).toEqual([503, { error: "Bridge unavailable" }]);
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }

    // A payer who was answered still is, from the cache, while the budget is spent; a new question is not.
    const i = answers.findIndex((r) => r.status === 200);
    const again = await quote(asked[i]!.paymentId, { payer: asked[i]!.payer });
    expect(again.status).toBe(200);
    expect(again.body.orderId).toBe(answers[i]!.body.orderId);
    expect((await quote(payments[0]!, { payer: payerAddress() })).status).toBe(503);
    expect(createTx()).toBe(40);

    // The budget refills at its rate: 40 a minute, one every 1.5 s.
    svc.clock.advance(1_500);
    expect((await quote(payments[1]!, { payer: payerAddress() })).status).toBe(200);
    expect((await quote(payments[1]!, { payer: payerAddress() })).status).toBe(503);
    expect(createTx()).toBe(41);
  });

  it("reports spend the provider's order-ids budget too: 45 addresses, 40 lookups", async () => {
    const paymentId = await newPayment();
    const hash = () => `0x${Buffer.from(generatePrivateKey().slice(2), "hex").toString("hex")}`;
    const answers = await Promise.all(
      Array.from({ length: 45 }, () =>
        svc.http("POST", `/payments/${paymentId}/bridge/orders`, {
          body: { txHash: hash() },
          headers: { "x-forwarded-for": newAddress() },
        }),
      ),
    );
    expect(fake.requests.filter((r) => r.path.endsWith("/order-ids"))).toHaveLength(40);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(40); // asked: no order in that transaction yet
    expect(answers.filter((r) => r.status === 503 && r.body.error === "Bridge unavailable" && r.headers.get("retry-after"))).toHaveLength(
      5,
    );
  });

  it("the same question within 15 s is asked of the provider once, whoever asks, and answered with its age", async () => {
    const paymentId = await newPayment();
    const payer = payerAddress();
    const answers = await Promise.all(Array.from({ length: 20 }, () => quote(paymentId, { payer })));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(createTx()).toBe(1);
    expect(new Set(answers.map((r) => r.body.orderId)).size).toBe(1);
    expect(answers.map((r) => r.body.quoteAgeMs)).toEqual(Array(20).fill(0)); // the clock is stopped
    const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM bridge_orders WHERE payment_id = $1`, [paymentId]);
    expect(rows[0].n).toBe(1);

    // The estimation (no payer) is another question, asked once too.
    for (let i = 0; i < 5; i++) expect((await quote(paymentId)).body.orderId).toBeNull();
    expect(createTx()).toBe(2);

    svc.clock.advance(10_000);
    const older = await quote(paymentId, { payer });
    expect([older.body.orderId, older.body.quoteAgeMs]).toEqual([answers[0]!.body.orderId, 10_000]);
    expect(createTx()).toBe(2);

    // Never served at or past 15 s: the provider is asked again, for a new order.
    svc.clock.advance(QUOTE_CACHE_TTL_MS - 10_000);
    const fresh = await quote(paymentId, { payer });
    expect(fresh.body.quoteAgeMs).toBe(0);
    expect(fresh.body.orderId).not.toBe(answers[0]!.body.orderId);
    expect(createTx()).toBe(3);

    // What is still due is part of the question: after a partial payment, the rest is quoted anew.
    await svc.deps.db.pool.query(`UPDATE payments SET received_units = '4000000' WHERE id = $1`, [paymentId]);
    const rest = await quote(paymentId, { payer });
    expect(rest.body.dstToken.units).toBe("6000000");
    expect(createTx()).toBe(4);
  });

  it("one payment gets 10 provider quotes a minute, then 429, without touching the others' budget", async () => {
    const paymentId = await newPayment();
    const answers = [];
    for (let i = 0; i < QUOTES_PER_PAYMENT_PER_MINUTE + 3; i++) answers.push(await quote(paymentId, { payer: payerAddress() }));
    expect(answers.map((r) => r.status)).toEqual([...Array(QUOTES_PER_PAYMENT_PER_MINUTE).fill(200), 429, 429, 429]);
    expect(answers.at(-1)!.body).toEqual({ error: "Too many requests" });
    expect(Number(answers.at(-1)!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(createTx()).toBe(QUOTES_PER_PAYMENT_PER_MINUTE);
    expect((await quote(await newPayment(), { payer: payerAddress() })).status).toBe(200);
  });
});
