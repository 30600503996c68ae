import { randomUUID } from "node:crypto";
import { getIntrospectionQuery } from "graphql";
import { zeroAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { executeGraphql } from "../../../api/graphql/execute.js";
import { startApiServer } from "../../../api/server.js";
import { MAX_DOCUMENT_BYTES } from "../../../api/graphql/limits.js";
import { schema } from "../../../api/graphql/schema.js";
import { createApiKey, createMerchant } from "../../../modules/merchants/index.js";
import { createTerminal } from "../../../modules/terminals/index.js";
import { readResponse } from "../../helpers/clocked-api.js";
import { startDeadRpc } from "../../helpers/dead-rpc.js";
import { createTestDeps } from "../../helpers/deps.js";
import { driveTo } from "../../modules/payments/fixtures/payment-states.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// The merchant GraphQL API (/api/graphql) against the REST API it mirrors: the same payments, the
// same errors in the same order, the same pages. No chain processing.
let svc: TestService;
let m: { id: string; apiKey: string };
beforeAll(async () => {
  // No price cache: a failing price source must show at once (the cache would serve a known price for up to its TTL).
  svc = await startTestService({ processors: false, env: { PRICE_CACHE_TTL_MS: "0" } });
  m = await svc.newMerchant();
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

type Gql = { status: number; body: { data?: any; errors?: any[] }; headers: Headers };
type Http = TestService["http"];
/** A GraphQL request to the run's API, or (`http`) to another one (brokenApi). */
const gql = (
  query: string,
  variables?: Record<string, unknown>,
  apiKey?: string,
  headers?: Record<string, string>,
  http: Http = svc.http,
) => http("POST", "/graphql", { body: { query, variables }, apiKey, headers }) as Promise<Gql>;

/**
 * A second API with one real part broken, for the failures a test cannot otherwise cause: over a schema of its own
 * (migrated, then `sql` run in it: a table Postgres refuses), with `env` over the run's (a dead RPC), and a merchant of
 * its own. Nothing is mocked: the failure is what Postgres or the socket answers. Stopped when the test ends.
 */
async function brokenApi(opts: { env?: Record<string, string>; sql?: string }) {
  // No price cache, as the run's service (a failing price source shows at once).
  const deps = await createTestDeps({ env: { PRICE_CACHE_TTL_MS: "0", ...opts.env } });
  const server = await startApiServer(deps, 0, "127.0.0.1").catch(async (e) => {
    await deps.cleanup();
    throw e;
  });
  onTestFinished(async () => {
    await server.close();
    await deps.cleanup();
  });
  const merchant = await createMerchant(deps.db, { name: "Broken Shop" });
  const apiKey = (await createApiKey(deps.db, merchant.id)).key;
  if (opts.sql) await deps.db.pool.query(opts.sql);
  const url = `http://127.0.0.1:${server.port}/api`;
  const http: Http = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.body !== undefined) headers["content-type"] = "application/json";
    if (o.apiKey) headers["x-api-key"] = o.apiKey;
    const body = o.body === undefined ? undefined : typeof o.body === "string" ? o.body : JSON.stringify(o.body);
    return readResponse(await fetch(url + path, { method, headers, body }));
  };
  return { deps, apiKey, http };
}

const PAYMENT_FIELDS = `paymentId orderId description status createdAt completedAt expiresAt chainId
  token { address symbol decimals } amount receivedAmount merchant recipientAddress
  transaction { hash blockNumber confirmations } settlementTransactionHash
  fees { platformFee gasFee processingFee totalFee feePercentage agentFee }
  gasless payerCoversFee blockConfirmations terminal { terminalId code name } priceSource
  unexpectedFunds { token symbol decimals amount units recoverable
    recovery { recoveryId status transactionHash recoveredAmount recoveredUnits error requestedAt } }
  bridge { orderId srcChainId srcToken status }`;
const LIST = `query List($limit: Int, $cursor: String, $status: String, $createdAfter: String, $createdBefore: String, $orderId: String) {
  payments(limit: $limit, cursor: $cursor, status: $status, createdAfter: $createdAfter, createdBefore: $createdBefore, orderId: $orderId) {
    data { ${PAYMENT_FIELDS} } nextCursor hasMore } }`;
const CREATE = `mutation Create($input: CreatePaymentInput!) { createPayment(input: $input) { url paymentId } }`;

async function gqlCreate(apiKey: string, input: Record<string, unknown>) {
  const res = await gql(CREATE, { input }, apiKey);
  expect(res.status).toBe(200);
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data.createPayment as { url: string; paymentId: string };
}
async function restList(apiKey: string, params: Record<string, string>) {
  const res = await svc.http("GET", `/v1/payments?${new URLSearchParams(params)}`, { apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}
async function gqlList(apiKey: string, params: Record<string, string | number>) {
  const res = await gql(LIST, params, apiKey);
  expect(res.status).toBe(200);
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data.payments;
}
/** The only error of a response, whose data field `field` is null. */
function onlyError(res: Gql, field: string) {
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual({ [field]: null });
  expect(res.body.errors).toHaveLength(1);
  return res.body.errors![0];
}

describe("payments: the GraphQL list is the REST list", () => {
  it("the Payment type has exactly the fields of a REST list item (and its objects theirs)", async () => {
    await gqlCreate(m.apiKey, body());
    const rest = (await restList(m.apiKey, { limit: "1" })).data[0];
    const fields = (type: string) => Object.keys((schema.getType(type) as any).getFields()).sort();
    expect(fields("Payment")).toEqual(Object.keys(rest).sort());
    expect(fields("Token")).toEqual(Object.keys(rest.token).sort());
    expect(fields("Fees")).toEqual(Object.keys(rest.fees).sort());
    expect(fields("Transaction")).toEqual(["blockNumber", "confirmations", "hash"]);
    expect(fields("Terminal")).toEqual(["code", "name", "terminalId"]);
    expect(fields("PaymentList")).toEqual(["data", "hasMore", "nextCursor"]);
  });

  it("createPayment, then payments(orderId): deep-equal to GET /v1/payments, for every kind of payment", async () => {
    await createTerminal(svc.deps.db, m.id, "FRONT1", "Front desk");
    const cases: Record<string, unknown>[] = [
      body(),
      body({
        token: token(777177, "USDC").address,
        amount: "0.000001",
        description: "Two coffees ☕",
        redirectUrl: "https://shop.example/thanks?o=1",
        expiresAt: svc.clock.now() + 3_600_000,
        blockConfirmations: 5,
        gasless: true,
        payerCoversFee: true,
        customPriceUsd: "2.5",
      }),
      body({ chainId: "137", token: zeroAddress, amount: "1234567.000000000000000001" }),
      body({ chainId: "137", token: token(137, "USDT0").address, amount: "3", description: null, redirectUrl: null, expiresAt: null }),
      body({ orderId: `POS-FRONT1-alice-${Date.now()}` }),
    ];
    for (const input of cases) {
      const created = await gqlCreate(m.apiKey, input);
      expect(created.url).toBe(`${svc.deps.config.appUrl}/pay/${created.paymentId}`);
      const orderId = input.orderId as string;
      const rest = await restList(m.apiKey, { orderId });
      const ours = await gqlList(m.apiKey, { orderId });
      expect(rest.data.map((p: any) => p.paymentId)).toEqual([created.paymentId]);
      expect(ours).toEqual(rest);
      expect(Object.keys(ours.data[0]).sort()).toEqual(Object.keys(rest.data[0]).sort());
    }
    // The terminal, the native coin's oracle price and the stored options came through.
    const pos = (await gqlList(m.apiKey, { orderId: cases[4]!.orderId as string })).data[0];
    expect(pos.terminal).toMatchObject({ code: "FRONT1", name: "Front desk" });
    expect((await gqlList(m.apiKey, { orderId: cases[2]!.orderId as string })).data[0]).toMatchObject({
      chainId: "137",
      priceSource: "trusted_oracle",
      amount: "1234567.000000000000000001",
    });
    expect((await gqlList(m.apiKey, { orderId: cases[1]!.orderId as string })).data[0]).toMatchObject({
      blockConfirmations: 5,
      gasless: true,
      payerCoversFee: true,
      expiresAt: cases[1]!.expiresAt,
    });
  });

  it("a completed payment: transaction (block number beyond 32 bits), completedAt, settlement hash, receivedAmount", async () => {
    const input = body({ amount: "7" });
    const { paymentId } = await gqlCreate(m.apiKey, input);
    const blockNumber = 2 ** 40; // far above the chain's head: 0 confirmations, stable while blocks are mined
    // pending -> paid -> deploying_wallet -> completed through transition(): paid with 7.000001 (the columns the
    // detector writes, detect.ts), then settled (those of the settlement, settlement/complete.ts).
    const done = await driveTo(svc.deps, paymentId, "completed", {
      paid: {
        received_units: "7000001",
        overpayment_units: "1",
        payment_tx_hash: `0x${"ab".repeat(32)}`,
        payment_block_number: String(blockNumber),
        received_block_number: String(blockNumber),
      },
      completed: { settlement_tx_hash: `0x${"cd".repeat(32)}` },
    });
    expect(done).toMatchObject({ status: "completed", received_units: "7000001", settlement_tx_hash: `0x${"cd".repeat(32)}` });
    const rest = await restList(m.apiKey, { orderId: input.orderId });
    const ours = await gqlList(m.apiKey, { orderId: input.orderId });
    expect(ours).toEqual(rest);
    expect(ours.data[0].transaction).toEqual({ hash: `0x${"ab".repeat(32)}`, blockNumber, confirmations: 0 });
    expect(ours.data[0].receivedAmount).toBe("7.000001");
    expect(typeof ours.data[0].completedAt).toBe("number");
  });

  it("payment(paymentId): GET /v1/payments/{paymentId}'s data; another merchant's, unknown or malformed id: REST's 404", async () => {
    const ONE = `query One($id: String!) { payment(paymentId: $id) { ${PAYMENT_FIELDS} } }`;
    const input = body({ payerCoversFee: true });
    const created = await gql(
      `mutation ($in: CreatePaymentInput!) { createPayment(input: $in) { url paymentId expiresAt amountDue } }`,
      { in: input },
      m.apiKey,
    );
    const { paymentId, url, expiresAt, amountDue } = created.body.data.createPayment;
    expect(url).toBe(`${svc.deps.config.appUrl}/pay/${paymentId}`);
    const rest = await svc.http("GET", `/v1/payments/${paymentId}`, { apiKey: m.apiKey });
    expect(rest.status).toBe(200);
    const ours = await gql(ONE, { id: paymentId }, m.apiKey);
    expect(ours.body).toEqual({ data: { payment: rest.body.data } });
    expect(rest.body.data).toEqual((await restList(m.apiKey, { orderId: input.orderId })).data[0]);
    expect(expiresAt).toBe(rest.body.data.expiresAt);
    expect(Number(amountDue)).toBeGreaterThan(12.5);

    const other = await svc.newMerchant();
    for (const [id, apiKey] of [
      [paymentId, other.apiKey],
      [randomUUID(), m.apiKey],
      ["not-a-uuid", m.apiKey],
    ] as const) {
      const restErr = await svc.http("GET", `/v1/payments/${encodeURIComponent(id)}`, { apiKey });
      expect(restErr.body).toEqual({ error: "Payment not found", code: "not_found" });
      const err = onlyError(await gql(ONE, { id }, apiKey), "payment");
      expect({ message: err.message, extensions: err.extensions }).toEqual({
        message: "Payment not found",
        extensions: { code: "NOT_FOUND", http: 404 },
      });
    }
    for (const apiKey of [undefined, "not-a-key"]) {
      const err = onlyError(await gql(ONE, { id: paymentId }, apiKey), "payment");
      expect({ message: err.message, extensions: err.extensions }).toEqual({
        message: "Unauthorized",
        extensions: { code: "UNAUTHENTICATED", http: 401 },
      });
    }
  });

  it("pagination: every page and cursor equal REST's; filters", async () => {
    const p = await svc.newMerchant();
    const make = Array.from({ length: 5 }, (_, i) => `c${i}: createPayment(input: $i${i}) { paymentId }`).join(" ");
    const vars = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`i${i}`, body()]));
    const defs = Object.keys(vars)
      .map((k) => `$${k}: CreatePaymentInput!`)
      .join(", ");
    const res = await gql(`mutation (${defs}) { ${make} }`, vars, p.apiKey);
    expect(res.body.errors).toBeUndefined();
    const created = Object.values(res.body.data).map((c: any) => c.paymentId);

    const walked: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    for (let page = 0; page < 10; page++) {
      const params: Record<string, string> = { limit: "2", ...(cursor ? { cursor } : {}) };
      const rest = await restList(p.apiKey, params);
      const ours = await gqlList(p.apiKey, { ...params, limit: 2 });
      expect(ours).toEqual(rest);
      walked.push(...ours.data.map((x: any) => x.paymentId));
      sizes.push(ours.data.length);
      if (!ours.hasMore) {
        expect(ours.nextCursor).toBeNull();
        break;
      }
      cursor = ours.nextCursor;
    }
    expect(sizes).toEqual([2, 2, 1]);
    expect([...walked].sort()).toEqual([...created].sort());
    expect(new Set(walked).size).toBe(5);

    const all = await gqlList(p.apiKey, {});
    expect(all.data.map((x: any) => x.paymentId)).toEqual(walked);
    const after = String(all.data[2].createdAt);
    const filters: Record<string, string>[] = [
      { status: "pending" },
      { status: "completed" },
      { createdAfter: after },
      { createdBefore: after, limit: "3" },
      { createdAfter: new Date(0).toISOString() },
    ];
    for (const params of filters)
      expect(await gqlList(p.apiKey, { ...params, ...(params.limit ? { limit: Number(params.limit) } : {}) })).toEqual(
        await restList(p.apiKey, params),
      );
  });

  it("invalid arguments: REST's message, extensions.code invalid_query, http 400", async () => {
    const cases: Record<string, string>[] = [
      { limit: "0" },
      { limit: "101" },
      { status: "nope" },
      { createdAfter: "yesterday" },
      { createdBefore: "2024-02-30" },
      { createdAfter: "2024-01-02", createdBefore: "2024-01-01" },
      { cursor: "garbage" },
    ];
    for (const params of cases) {
      const rest = await svc.http("GET", `/v1/payments?${new URLSearchParams(params)}`, { apiKey: m.apiKey });
      expect(rest.status).toBe(400);
      const vars: Record<string, unknown> = { ...params };
      if (params.limit) vars.limit = Number(params.limit);
      const err = onlyError(await gql(LIST, vars, m.apiKey), "payments");
      expect(err.message, JSON.stringify(params)).toBe(rest.body.error);
      expect(err.extensions).toEqual({ code: "invalid_query", http: 400 });
      expect(err.path).toEqual(["payments"]);
    }
  });

  it("an unexpected failure is REST's 500, without its text: Internal server error", async () => {
    // A real database failure: the list joins `terminals`, which this API's schema no longer has, so Postgres refuses the
    // list's statement (relation "terminals" does not exist) after the key lookup, which needs no terminal, succeeded.
    const broken = await brokenApi({ sql: `ALTER TABLE terminals RENAME TO terminals_gone` });
    const rest = await broken.http("GET", "/v1/payments", { apiKey: broken.apiKey });
    expect({ status: rest.status, body: rest.body }).toEqual({
      status: 500,
      body: { error: "Internal server error", code: "internal_error" },
    });
    const res = await gql(`{ payments { hasMore } }`, undefined, broken.apiKey, undefined, broken.http);
    const err = onlyError(res, "payments");
    expect({ message: err.message, path: err.path, extensions: err.extensions }).toEqual({
      message: "Internal server error",
      path: ["payments"],
      extensions: { code: "INTERNAL_SERVER_ERROR", http: 500 },
    });
    // Postgres's text stays in the log.
    expect(JSON.stringify(rest.body) + JSON.stringify(res.body)).not.toMatch(/terminals|relation|does not exist/);
  });
});

describe("createPayment: REST's checks, order, messages and statuses", () => {
  const CODE: Record<number, string> = {
    400: "BAD_USER_INPUT",
    401: "UNAUTHENTICATED",
    500: "INTERNAL_SERVER_ERROR",
    503: "SERVICE_UNAVAILABLE",
  };

  /** POST /payments and createPayment with the same body: the same error (on the run's API, or `http`'s). */
  async function sameError(
    input: Record<string, unknown>,
    apiKey: string | undefined,
    expected: { error: string; status: number; retryAfter?: number },
    http: Http = svc.http,
  ) {
    const rest = await http("POST", "/payments", { body: input, apiKey });
    expect({ status: rest.status, body: rest.body }, JSON.stringify(input).slice(0, 200)).toEqual({
      status: expected.status,
      body: { error: expected.error },
    });
    const err = onlyError(await gql(CREATE, { input }, apiKey, undefined, http), "createPayment");
    expect({ message: err.message, extensions: err.extensions, path: err.path }).toEqual({
      message: expected.error,
      extensions: {
        code: CODE[expected.status],
        http: expected.status,
        ...(expected.retryAfter !== undefined && { retryAfter: expected.retryAfter }),
      },
      path: ["createPayment"],
    });
    if (expected.retryAfter !== undefined) expect(rest.headers.get("retry-after")).toBe(String(expected.retryAfter));
  }

  it("every error message, first failing check first: form, merchant, token, network, amount, key, creation", async () => {
    const key = (await svc.newMerchant()).apiKey;
    const FORM = "Invalid form data";
    const allBad = { merchant: "nope", token: "nope", chainId: "999", amount: "-1" };
    const cases: [Record<string, unknown>, string][] = [
      [body({ ...allBad, orderId: "" }), FORM],
      [body({ orderId: "o".repeat(101) }), FORM],
      [body({ description: "d".repeat(201) }), FORM],
      [body({ redirectUrl: "javascript:alert(1)" }), FORM],
      [body({ expiresAt: Date.now() - 60_000 }), FORM],
      [body({ expiresAt: Date.now() + 60_000.5 }), FORM],
      [body({ blockConfirmations: 0 }), FORM],
      [body({ blockConfirmations: 101 }), FORM],
      [body({ ...allBad, customPriceUsd: "abc" }), FORM],
      [body({ customPriceUsd: "0" }), FORM],
      [body(allBad), "Invalid Merchant address format"],
      [body({ merchant: zeroAddress }), "Invalid Merchant address format"],
      [body({ ...allBad, merchant: payout() }), "Invalid Token address format"],
      [body({ chainId: "999", amount: "-1" }), "Invalid network selected"],
      [body({ chainId: "1", token: "0xdAC17F958D2ee523a2206206994597C13D831ec7" }), "Invalid network selected"],
      [body({ amount: "-1" }), "Amount must be a positive number"],
      [body({ amount: "0" }), "Amount must be a positive number"],
      [body({ amount: "1.0000001" }), "Amount must have at most 6 decimal places"],
      [body({ amount: "0.0000000" }), "Amount must be a positive number"],
      [body({ chainId: "137", token: zeroAddress, amount: "1.0000000000000000001" }), "Amount must have at most 18 decimal places"],
      [body({ amount: "1" + "0".repeat(80) }), "Amount must be a positive number"],
      // Checks of createPayment() itself (a key is needed to get there).
      [body({ token: zeroAddress }), "Invalid Token address format"],
    ];
    for (const [input, error] of cases) await sameError(input, key, { error, status: 400 });
  });

  it("Unauthorized (401) for a valid body without a key or with an unknown key; the body's errors come first", async () => {
    for (const apiKey of [undefined, "not-a-key"]) {
      await sameError(body(), apiKey, { error: "Unauthorized", status: 401 });
      await sameError(body({ orderId: "" }), apiKey, { error: "Invalid form data", status: 400 });
      await sameError(body({ amount: "0" }), apiKey, { error: "Amount must be a positive number", status: 400 });
    }
  });

  it("Oracle price unavailable (503) when the price source fails", async () => {
    // The oracle's chain RPC is down (a node that drops every connection); the native coin has no other price source.
    const rpc = await startDeadRpc();
    onTestFinished(() => rpc.close());
    const broken = await brokenApi({ env: { RPC_URL_137: rpc.url } });
    await sameError(
      body({ chainId: "137", token: zeroAddress, amount: "1" }),
      broken.apiKey,
      // The spec's "retry after a few seconds": Retry-After 5 (REST), extensions.retryAfter (GraphQL).
      { error: "Oracle price unavailable", status: 503, retryAfter: 5 },
      broken.http,
    );
    // The oracle was asked (and its connections dropped): the 503 is the RPC's failure, not a missing price.
    expect(rpc.connections).toBeGreaterThan(0);
    expect((await broken.deps.db.pool.query(`SELECT count(*)::int AS n FROM payments`)).rows[0].n).toBe(0);
  });

  it("Failed to create payment (500) when creation throws", async () => {
    // A real database failure at the insert: this API's payments table takes no new row (a CHECK no row passes; NOT VALID
    // holds it for new rows only). The body's checks, the key and the quote before it run as usual.
    const broken = await brokenApi({ sql: `ALTER TABLE payments ADD CONSTRAINT refuses_every_row CHECK (false) NOT VALID` });
    await sameError(body(), broken.apiKey, { error: "Failed to create payment", status: 500 }, broken.http);
    // One statement: neither the payment nor its watched address was written.
    const counts = await broken.deps.db.pool.query(
      `SELECT (SELECT count(*)::int FROM payments) AS payments, (SELECT count(*)::int FROM watched_addresses WHERE kind = 'payment') AS watched`,
    );
    expect(counts.rows[0]).toEqual({ payments: 0, watched: 0 });
  });

  it("type errors of the schema are request errors (400, nothing runs)", async () => {
    const res = await gql(CREATE, { input: { ...body(), merchant: undefined } }, m.apiKey);
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors![0].extensions.code).toBe("BAD_USER_INPUT");
    expect(res.body.errors![0].message).toContain('Field "merchant" of required type "String!" was not provided');
  });
});

describe("rate limits: createPayment 100 a minute per merchant (queries do not count), balance 60", () => {
  // Stopped time: the buckets refill as time passes (one creation every 600 ms, one balance a second).
  beforeEach(() => svc.clock.freeze());
  afterEach(() => svc.clock.resume());

  it("the 101st createPayment of a merchant in a minute is RATE_LIMITED; queries still run; its other keys and REST share the limit", async () => {
    const r = await svc.newMerchant();
    // A fresh one-minute window, so the whole test fits in it.
    svc.clock.advance(60_000 - (svc.clock.now() % 60_000) + 10);
    for (let i = 0; i < 5; i++) expect((await gqlList(r.apiKey, { limit: 1 })).data).toEqual([]);
    // At most 10 root fields a document: 10 documents of 10 invalid creations, then one more.
    const ten = Array.from({ length: 10 }, (_, i) => `c${i}: createPayment(input: $bad) { paymentId }`).join(" ");
    for (let batch = 0; batch < 10; batch++) {
      const res = await gql(`mutation ($bad: CreatePaymentInput!) { ${ten} }`, { bad: body({ orderId: "" }) }, r.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.errors!.map((e) => e.message)).toEqual(Array(10).fill("Invalid form data"));
    }
    const res = await gql(
      `mutation ($bad: CreatePaymentInput!) { c100: createPayment(input: $bad) { paymentId } }`,
      { bad: body({ orderId: "" }) },
      r.apiKey,
    );
    const errors = res.body.errors!;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ message: "Too many requests", path: ["c100"], extensions: { code: "RATE_LIMITED", http: 429 } });
    expect(errors[0].extensions.retryAfter).toBeGreaterThan(0);
    expect(errors[0].extensions.retryAfter).toBeLessThanOrEqual(60);

    // Still limited, even with a valid body; reads are not.
    expect(onlyError(await gql(CREATE, { input: body() }, r.apiKey), "createPayment")).toMatchObject({ message: "Too many requests" });
    expect((await gqlList(r.apiKey, { limit: 1 })).data).toEqual([]);
    // Another key of the merchant, and REST, take from the same bucket (api/middleware/rate-limit.ts); another merchant creates.
    const second = (await createApiKey(svc.deps.db, r.id, "second")).key;
    expect(onlyError(await gql(CREATE, { input: body() }, second), "createPayment")).toMatchObject({ message: "Too many requests" });
    expect((await svc.http("POST", "/payments", { body: body(), apiKey: r.apiKey })).status).toBe(429);
    expect((await gqlCreate((await svc.newMerchant()).apiKey, body())).paymentId).toBeTruthy();
  });

  it("the 61st balance of a key in a minute is RATE_LIMITED, like GET /balance", async () => {
    const r = await svc.newMerchant();
    svc.clock.advance(60_000 - (svc.clock.now() % 60_000) + 10);
    const ten = `{ ${Array.from({ length: 10 }, (_, i) => `b${i}: balance { balance }`).join(" ")} }`;
    for (let batch = 0; batch < 6; batch++) {
      const ok = await gql(ten, undefined, r.apiKey);
      expect(ok.body.errors).toBeUndefined();
      expect(Object.values(ok.body.data)).toEqual(Array(10).fill({ balance: "0.000000" }));
    }
    const res = await gql(`{ b60: balance { balance } }`, undefined, r.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors![0]).toMatchObject({
      message: "Too many requests",
      path: ["b60"],
      extensions: { code: "RATE_LIMITED", http: 429 },
    });
    expect(res.body.data.b60).toBeNull();
  });

  it("more than 10 root fields in one operation are refused", async () => {
    const eleven = `{ ${Array.from({ length: 11 }, (_, i) => `p${i}: promoStatus { freeTransactions { used } }`).join(" ")} }`;
    const res = await gql(eleven, undefined, m.apiKey);
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ message: "Too many root fields: 11 exceeds the limit of 10" }));
  });
});

describe("balance, promoStatus, withdrawPayment", () => {
  const BALANCE = `{ balance { balance depositAddresses { chainId address tokens { symbol address } } } promoStatus { freeTransactions { eligible used remaining } } }`;

  it("balance and promoStatus equal GET /balance and GET /promo-status", async () => {
    const b = await svc.newMerchant();
    for (const [micros, used] of [
      [0n, 0],
      [12_345_678n, 1],
    ] as const) {
      if (micros) {
        await svc.deps.db.pool.query(
          `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', $2, $3)`,
          [b.id, micros.toString(), `test:${randomUUID()}`],
        );
        // Gasless: no Gas Tank fee, so settling it debits nothing (settlement/reserve.ts) and the balance stays.
        const { paymentId } = await gqlCreate(b.apiKey, body({ gasless: true }));
        // Completed through transition(), step by step; it holds a free slot only if the promotion applied to it.
        expect((await driveTo(svc.deps, paymentId, "completed")).promo_applied).toBe(true);
      }
      const res = await gql(BALANCE, undefined, b.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      const rest = {
        balance: (await svc.http("GET", "/balance", { apiKey: b.apiKey })).body,
        promoStatus: (await svc.http("GET", "/promo-status", { apiKey: b.apiKey })).body,
      };
      expect(res.body.data).toEqual(rest);
      expect(res.body.data.balance.balance).toBe(micros ? "12.345678" : "0.000000");
      expect(res.body.data.promoStatus.freeTransactions).toEqual({ eligible: true, used, remaining: 30 - used });
    }
    const { data } = (await gql(BALANCE, undefined, b.apiKey)).body;
    expect(data.balance.depositAddresses.map((d: any) => d.chainId).sort()).toEqual([137, 777177]);
    for (const d of data.balance.depositAddresses)
      expect(d.tokens.map((t: any) => t.symbol)).toEqual(expect.arrayContaining([expect.stringMatching(/^USDT/)]));
  });

  it("withdrawPayment: a partial payment -> withdraw_request; then REST's 409; unknown, malformed or foreign ids are 404", async () => {
    const w = await svc.newMerchant();
    const { paymentId } = await gqlCreate(w.apiKey, body({ amount: "10" }));
    // A partial payment, through transition(): the detector's expired -> pending "funds received after expiry"
    // (detect.ts) is the transition that records a partial amount on a pending payment (one received before expiry
    // is written with no status change).
    await driveTo(svc.deps, paymentId, "expired");
    const partial = await driveTo(svc.deps, paymentId, "pending", {
      pending: {
        received_units: "2500000",
        payment_tx_hash: `0x${"ef".repeat(32)}`,
        payment_block_number: "1",
        received_block_number: "1",
      },
    });
    expect(partial).toMatchObject({ status: "pending", received_units: "2500000" });
    const WITHDRAW = `mutation ($id: String!) { withdrawPayment(paymentId: $id) { paymentId status receivedAmount } }`;
    const ok = await gql(WITHDRAW, { id: paymentId }, w.apiKey);
    expect(ok.body).toEqual({ data: { withdrawPayment: { paymentId, status: "withdraw_request", receivedAmount: "2.5" } } });
    expect((await gqlList(w.apiKey, { limit: 1 })).data[0].status).toBe("withdraw_request");

    const other = await svc.newMerchant();
    const cases: [string, string][] = [
      [paymentId, w.apiKey],
      [randomUUID(), w.apiKey],
      ["not-a-uuid", w.apiKey],
      [paymentId, other.apiKey],
    ];
    for (const [id, apiKey] of cases) {
      const rest = await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey });
      const err = onlyError(await gql(WITHDRAW, { id }, apiKey), "withdrawPayment");
      expect(err.message).toBe(rest.body.error);
      expect(err.extensions).toEqual({ code: rest.status === 409 ? "CONFLICT" : "NOT_FOUND", http: rest.status });
    }
  });
});

describe("authentication", () => {
  it("no key or an unknown key: each field fails with Unauthorized (UNAUTHENTICATED, http 401), HTTP 200", async () => {
    for (const apiKey of [undefined, "not-a-key"]) {
      const res = await gql(`{ payments { hasMore } balance { balance } promoStatus { freeTransactions { used } } }`, undefined, apiKey);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ payments: null, balance: null, promoStatus: null });
      // Errors come in the order the fields failed: sorted by field here.
      expect(res.body.errors!.map((e) => [e.path[0], e.message, e.extensions]).sort()).toEqual(
        ["balance", "payments", "promoStatus"].map((f) => [f, "Unauthorized", { code: "UNAUTHENTICATED", http: 401 }]),
      );
      const w = onlyError(
        await gql(`mutation { withdrawPayment(paymentId: "${randomUUID()}") { status } }`, undefined, apiKey),
        "withdrawPayment",
      );
      expect(w).toMatchObject({ message: "Unauthorized", extensions: { code: "UNAUTHENTICATED", http: 401 } });
    }
    // A key of another merchant sees only its own payments.
    const other = await svc.newMerchant();
    expect((await gqlList(other.apiKey, {})).data).toEqual([]);
  });
});

describe("HTTP and limits", () => {
  const PROMO = `{ promoStatus { freeTransactions { used } } }`;

  it("depth: deeper than 8 is refused (fragments included); 8 is not a depth error", async () => {
    const nest = (names: string[], leaf = "leaf") => names.reduceRight((inner, n) => `${n} { ${inner} }`, leaf);
    const deep9 = `{ ${nest(["payments", "data", "token", "a", "b", "c", "d", "e"])} }`;
    const deep8 = `{ ${nest(["payments", "data", "token", "a", "b", "c", "d"])} }`;
    const res = await gql(deep9, undefined, m.apiKey);
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors).toContainEqual(
      expect.objectContaining({
        message: "Query is too deep: depth 9 exceeds the limit of 8",
        extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
      }),
    );
    const ok8 = await gql(deep8, undefined, m.apiKey);
    expect(ok8.body.errors!.map((e) => e.message).filter((msg) => msg.includes("too deep"))).toEqual([]);

    const viaFragments = `query { ...Q } fragment Q on Query { payments { ...L } } fragment L on PaymentList { data { token { ${nest(["a", "b", "c", "d", "e"])} } } }`;
    expect((await gql(viaFragments, undefined, m.apiKey)).body.errors).toContainEqual(
      expect.objectContaining({ message: "Query is too deep: depth 9 exceeds the limit of 8" }),
    );

    // Introspection (allowed outside production): graphql-js's full introspection query passes, deeper does not.
    const intro = await gql(getIntrospectionQuery(), undefined, m.apiKey);
    expect(intro.status).toBe(200);
    expect(intro.body.data.__schema.queryType.name).toBe("Query");
    // __schema types (fields type) x 7 name: depth 17.
    const refused = await gql(
      `{ ${nest(["__schema", "types", ...Array(7).fill(["fields", "type"]).flat()], "name")} }`,
      undefined,
      m.apiKey,
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errors![0].message).toMatch(/^Introspection query is too deep: depth \d+ exceeds the limit of 15$/);
  });

  it("NODE_ENV=production: introspection is refused, __typename is not", async () => {
    const prod = { ...svc.deps, config: { ...svc.deps.config, NODE_ENV: "production" } };
    const req = { method: "POST" as const, apiKey: m.apiKey, clientIp: "127.0.0.1" };
    const schemaQuery = await executeGraphql(prod, { ...req, query: `{ __schema { queryType { name } } }` });
    expect(schemaQuery.status).toBe(400);
    expect(schemaQuery.body.errors![0]).toMatchObject({
      message: expect.stringContaining("introspection"),
      extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
    });
    expect((await executeGraphql(prod, { ...req, query: `{ __type(name: "Payment") { name } }` })).status).toBe(400);
    expect(await executeGraphql(prod, { ...req, query: `{ __typename }` })).toEqual({
      status: 200,
      body: { data: { __typename: "Query" } },
    });
    expect((await executeGraphql(svc.deps, { ...req, query: `{ __schema { queryType { name } } }` })).status).toBe(200);
  });

  it("documents up to 20 kB are accepted, larger ones are 413", async () => {
    const padded = (bytes: number) => PROMO + " ".repeat(bytes - PROMO.length);
    const ok = await gql(padded(MAX_DOCUMENT_BYTES), undefined, m.apiKey);
    expect(ok.status).toBe(200);
    expect(ok.body.data.promoStatus.freeTransactions.used).toBeTypeOf("number");
    const big = await gql(padded(MAX_DOCUMENT_BYTES + 1), undefined, m.apiKey);
    expect(big.status).toBe(413);
    expect(big.body.errors![0]).toEqual({
      message: `Document too large: ${MAX_DOCUMENT_BYTES + 1} bytes (limit ${MAX_DOCUMENT_BYTES})`,
      extensions: { code: "PAYLOAD_TOO_LARGE" },
    });
    const huge = await svc.http("POST", "/graphql", { body: { query: PROMO, variables: { x: "x".repeat(70_000) } }, apiKey: m.apiKey });
    expect(huge.status).toBe(413);
  });

  it("GET runs queries, not mutations (405); malformed requests are 400; the response type follows Accept", async () => {
    const get = await svc.http("GET", `/graphql?query=${encodeURIComponent(PROMO)}`, { apiKey: m.apiKey });
    expect(get.status).toBe(200);
    expect(get.body.data.promoStatus.freeTransactions.used).toBeTypeOf("number");
    expect(get.headers.get("content-type")).toMatch(/^application\/json/);
    const withVars = await svc.http(
      "GET",
      `/graphql?query=${encodeURIComponent(LIST)}&variables=${encodeURIComponent(JSON.stringify({ limit: 1 }))}`,
      { apiKey: m.apiKey },
    );
    expect(withVars.body.data.payments.data).toHaveLength(1);

    const mutation = await svc.http(
      "GET",
      `/graphql?query=${encodeURIComponent(`mutation { withdrawPayment(paymentId: "x") { status } }`)}`,
      { apiKey: m.apiKey },
    );
    expect(mutation.status).toBe(405);
    expect(mutation.headers.get("allow")).toBe("POST");

    const parse = await gql(`{ payments { `, undefined, m.apiKey);
    expect(parse.status).toBe(400);
    expect(parse.body.errors![0].extensions.code).toBe("GRAPHQL_PARSE_FAILED");
    const unknown = await gql(`{ nope }`, undefined, m.apiKey);
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors![0]).toMatchObject({
      message: 'Cannot query field "nope" on type "Query".',
      extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
    });
    for (const raw of ["{not json", "[]", JSON.stringify({ query: 5 }), JSON.stringify({ query: PROMO, variables: [1] })])
      expect((await svc.http("POST", "/graphql", { body: raw, apiKey: m.apiKey })).status, raw).toBe(400);
    const text = await fetch(`${svc.url}/graphql`, {
      method: "POST",
      body: JSON.stringify({ query: PROMO }),
      headers: { "x-api-key": m.apiKey, "content-type": "text/plain" },
    });
    expect(text.status).toBe(415);

    const typed = await gql(PROMO, undefined, m.apiKey, { accept: "application/graphql-response+json, application/json;q=0.9" });
    expect(typed.status).toBe(200);
    expect(typed.headers.get("content-type")).toMatch(/^application\/graphql-response\+json/);
  });
});
