import { randomUUID } from "node:crypto";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INVALID_KEY, IN_PROGRESS, OTHER_ENDPOINT, otherRequest } from "../../../modules/idempotency/index.js";
import { createApiKey } from "../../../modules/merchants/index.js";
import { cannotCancelIn } from "../../../modules/payments/index.js";
import { waitFor } from "../../helpers/chain.js";
import { readResponse } from "../../helpers/clocked-api.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Idempotency keys (docs/payments.md "Idempotency keys", issue 18): the `Idempotency-Key` header on POST /payments and the other
// API-key POSTs, and the `idempotencyKey` argument of GraphQL mutations, over HTTP on the real stack (Postgres, the
// API on a socket). A retry gets the first response again (status, body, headers of its own); another body or
// endpoint under the key is 409; keys are the API key's; concurrent requests with one key run the operation once
// (their overlap forced with a table lock); a request that died, or failed with a 5xx, is run again by its retry,
// which answers with the payment the first attempt made. No chain processing.
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(() => svc?.stop());

const DAY_MS = 24 * 60 * 60 * 1000;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const USDT = () => svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!;
/** A valid POST /payments body on the service chain (stablecoin: no price source involved). */
const body = (over: Record<string, unknown> = {}) => ({
  merchant: payout(),
  chainId: "777177",
  token: USDT().address,
  amount: "12.5",
  orderId: `order-${randomUUID()}`,
  ...over,
});

const post = (path: string, b: unknown, apiKey: string, key?: string) =>
  svc.http("POST", path, { body: b, apiKey, headers: key === undefined ? {} : { "idempotency-key": key } });
const create = (b: unknown, apiKey: string, key?: string) => post("/payments", b, apiKey, key);

/** The merchant's payments rows, read from Postgres itself. */
async function paymentRows(merchantId: string, orderId?: string): Promise<{ id: string }[]> {
  const { rows } = await svc.deps.db.pool.query<{ id: string }>(
    `SELECT id FROM payments WHERE merchant_id = $1 AND ($2::text IS NULL OR order_id = $2) ORDER BY created_at`,
    [merchantId, orderId ?? null],
  );
  return rows;
}
const idOf = (url: string) => url.split("/pay/")[1]!;

/** The key's row, as Postgres holds it. */
async function keyRow(key: string) {
  const { rows } = await svc.deps.db.pool.query(
    `SELECT state, response_status, response_body, locked_at = '-infinity' AS abandoned, row_to_json(k)::text AS text
       FROM idempotency_keys k WHERE key = $1`,
    [key],
  );
  type KeyRow = { state: string; response_status: number | null; response_body: string | null; abandoned: boolean; text: string };
  return rows[0] as KeyRow | undefined;
}

/**
 * Runs `first` while a transaction of the test holds `LOCK TABLE payments IN SHARE MODE` (reads go on, an INSERT
 * waits): once a backend of the service is seen waiting on the test's transaction with the payment INSERT
 * (pg_blocking_pids, pg_stat_activity), `meanwhile` runs; then the lock is let go. So `meanwhile` runs while the first
 * request holds its claim, whatever the scheduling. Returns both results.
 */
async function whilePaymentInsertWaits<A, B>(first: () => Promise<A>, meanwhile: () => Promise<B>): Promise<[A, B]> {
  const holder = await svc.deps.db.pool.connect();
  let running: Promise<A> | undefined;
  try {
    await holder.query("BEGIN");
    await holder.query("LOCK TABLE payments IN SHARE MODE");
    const pid: number = (await holder.query(`SELECT pg_backend_pid() AS pid`)).rows[0].pid;
    running = first();
    running.catch(() => {}); // awaited below
    await waitFor(
      async () => {
        const { rows } = await svc.deps.db.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE '%INSERT INTO payments%'`,
          [pid],
        );
        return rows.length > 0;
      },
      { timeout: 30_000, interval: 20, what: "the first request's payment INSERT waiting on the test's lock" },
    );
    const during = await meanwhile();
    await holder.query("COMMIT");
    return [await running, during];
  } catch (e) {
    await holder.query("ROLLBACK").catch(() => {});
    await running?.catch(() => {});
    throw e;
  } finally {
    holder.release();
  }
}

describe("POST /payments with Idempotency-Key", () => {
  it("a retry with the same key and body gets the same status and body (same payment and URL), marked replayed; one row", async () => {
    const m = await svc.newMerchant();
    const key = randomUUID();
    const b = body();
    const first = await create(b, m.apiKey, key);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(Object.keys(first.body)).toEqual(["url", "paymentId", "expiresAt", "amountDue"]);
    expect(first.headers.get("idempotent-replayed")).toBeNull();

    // The route's rate-limit headers are the response's own: replayed as they were (a replay never reaches the route).
    expect(first.headers.get("ratelimit")).toMatch(/^limit=\d+, remaining=\d+, reset=\d+$/);
    for (let i = 0; i < 2; i++) {
      const again = await create(b, m.apiKey, key);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      for (const h of ["content-type", "ratelimit", "ratelimit-policy"]) expect(again.headers.get(h), h).toBe(first.headers.get(h));
      // The exchange's own headers are not: this request's id.
      expect(again.headers.get("x-request-id")).toBeTruthy();
      expect(again.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    }
    expect((await paymentRows(m.id, b.orderId)).map((r) => r.id)).toEqual([idOf(first.body.url)]);

    // Without the header the same body is a new request, as always (a second payment).
    const plain = await create(b, m.apiKey);
    expect(plain.status).toBe(200);
    expect(plain.body.url).not.toBe(first.body.url);
    expect(plain.headers.get("idempotent-replayed")).toBeNull();
    expect(await paymentRows(m.id, b.orderId)).toHaveLength(2);
  });

  it("the body is compared in canonical form: other key order and whitespace are the same request", async () => {
    const m = await svc.newMerchant();
    const key = randomUUID();
    const b = body();
    const first = await create(b, m.apiKey, key);
    expect(first.status).toBe(200);
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(b).reverse()), null, 2);
    const again = await create(reordered, m.apiKey, key);
    expect([again.status, again.body]).toEqual([200, first.body]);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await paymentRows(m.id)).toHaveLength(1);
  });

  it("the same key with a different body is 409 with a clear message, and creates nothing", async () => {
    const m = await svc.newMerchant();
    const key = randomUUID();
    const b = body();
    const first = await create(b, m.apiKey, key);
    expect(first.status).toBe(200);
    const other = await create({ ...b, amount: "13" }, m.apiKey, key);
    expect([other.status, other.body]).toEqual([409, { error: otherRequest("body") }]);
    expect(otherRequest("body")).toBe("This Idempotency-Key was already used with a different request body");
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    // The first request's answer is still there for its retries.
    expect((await create(b, m.apiKey, key)).body).toEqual(first.body);
    expect(await paymentRows(m.id)).toHaveLength(1);
  });

  it("ten requests with one key, the nine others sent while the first holds its claim: one payment, nine 409 in progress", async () => {
    const m = await svc.newMerchant();
    const key = randomUUID();
    const b = body();
    // The first request is held at its payment INSERT (after its claim); the nine others run meanwhile.
    const [first, others] = await whilePaymentInsertWaits(
      () => create(b, m.apiKey, key),
      () => Promise.all(Array.from({ length: 9 }, () => create(b, m.apiKey, key))),
    );
    for (const r of others) {
      expect([r.status, r.body]).toEqual([409, { error: IN_PROGRESS }]);
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.headers.get("idempotent-replayed")).toBeNull();
    }
    const rows = await paymentRows(m.id);
    expect(rows).toHaveLength(1);
    expect([first.status, first.body]).toEqual([
      200,
      {
        url: `${svc.deps.config.appUrl}/pay/${rows[0]!.id}`,
        paymentId: rows[0]!.id,
        expiresAt: expect.any(Number),
        amountDue: expect.any(String),
      },
    ]);
    // Once the first has finished, a retry gets its response.
    const retry = await create(b, m.apiKey, key);
    expect([retry.status, retry.body]).toEqual([200, first.body]);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await paymentRows(m.id)).toHaveLength(1);
  });

  it("a final 4xx is kept too: the same invalid body under the key gets the same 400, replayed", async () => {
    const m = await svc.newMerchant();
    const key = randomUUID();
    const bad = body({ amount: "-1" });
    const first = await create(bad, m.apiKey, key);
    expect(first.status).toBe(400);
    expect(first.body).toEqual({ error: expect.any(String) });
    const again = await create(bad, m.apiKey, key);
    expect([again.status, again.body]).toEqual([400, first.body]);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await paymentRows(m.id)).toHaveLength(0);
  });

  it("a key of 1 to 255 printable ASCII characters is accepted; 256 characters is 400, before anything runs", async () => {
    const m = await svc.newMerchant();
    const b = body();
    const tooLong = await create(b, m.apiKey, "k".repeat(256));
    expect([tooLong.status, tooLong.body]).toEqual([400, { error: INVALID_KEY }]);
    expect(INVALID_KEY).toBe("Idempotency-Key must be 1 to 255 printable ASCII characters");
    expect(await paymentRows(m.id)).toHaveLength(0);
    const longest = await create(b, m.apiKey, `${"k".repeat(250)} ~!#$`);
    expect(longest.status).toBe(200);
    const one = await create(body(), m.apiKey, "x");
    expect(one.status).toBe(200);
    expect(await paymentRows(m.id)).toHaveLength(2);
  });

  it("keys belong to the API key: another merchant, or another key of the same merchant, with the same key and body is a new payment", async () => {
    const a = await svc.newMerchant();
    const b = await svc.newMerchant();
    const a2 = (await createApiKey(svc.deps.db, a.id)).key;
    const key = randomUUID();
    const sent = body();
    const ra = await create(sent, a.apiKey, key);
    const rb = await create(sent, b.apiKey, key);
    const ra2 = await create(sent, a2, key);
    for (const r of [ra, rb, ra2]) {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.headers.get("idempotent-replayed")).toBeNull();
    }
    expect(new Set([ra.body.url, rb.body.url, ra2.body.url]).size).toBe(3);
    expect((await paymentRows(a.id)).map((r) => r.id).sort()).toEqual([idOf(ra.body.url), idOf(ra2.body.url)].sort());
    expect((await paymentRows(b.id)).map((r) => r.id)).toEqual([idOf(rb.body.url)]);
    // Each key's retry gets its own first response.
    for (const [apiKey, first] of [
      [a.apiKey, ra],
      [a2, ra2],
    ] as const) {
      const again = await create(sent, apiKey, key);
      expect([again.status, again.body, again.headers.get("idempotent-replayed")]).toEqual([200, first.body, "true"]);
    }
  });

  it("a request that died after creating its payment: the retry waits for the timeout on the database's clock, then gets that payment", async () => {
    const m = await svc.newMerchant();
    const key = randomUUID();
    const b = body();
    const first = await create(b, m.apiKey, key);
    expect(first.status).toBe(200);
    // The process dies after the payment committed, before its response was stored: the key's row as it was then,
    // its last sign of life at `lockedAt` (Postgres's clock).
    const diedAt = (lockedAt: string) =>
      svc.deps.db.pool.query(
        `UPDATE idempotency_keys SET state = 'processing', response_status = NULL, response_body = NULL, response_headers = NULL,
                completed_at = NULL, locked_at = ${lockedAt}
          WHERE key = $1`,
        [key],
      );
    await diedAt("now()");
    // The service's clock runs 10 minutes ahead: whether a claim is alive is read on the database's clock, the one every
    // replica shares, so this does not make the fresh claim look abandoned.
    svc.clock.advance(10 * 60_000);
    const live = await create(b, m.apiKey, key);
    expect([live.status, live.body]).toEqual([409, { error: IN_PROGRESS }]);
    await diedAt("now() - interval '100 seconds'");
    expect((await create(b, m.apiKey, key)).body).toEqual({ error: IN_PROGRESS });
    // 2 minutes without a sign of life: abandoned. Another body still may not take it over.
    await diedAt("now() - interval '121 seconds'");
    const other = await create({ ...b, amount: "13" }, m.apiKey, key);
    expect([other.status, other.body]).toEqual([409, { error: otherRequest("body") }]);
    // The same request runs again, and answers with the payment the first attempt made (the key's use is on it).
    const retry = await create(b, m.apiKey, key);
    expect([retry.status, retry.body]).toEqual([200, first.body]);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect((await paymentRows(m.id)).map((r) => r.id)).toEqual([idOf(first.body.url)]);
    const again = await create(b, m.apiKey, key);
    expect([again.status, again.body, again.headers.get("idempotent-replayed")]).toEqual([200, first.body, "true"]);
    expect((await keyRow(key))?.state).toBe("done");
  });

  it("a 5xx is not kept: the key stays bound to the request, whose retry runs at once; once the failure is gone it creates one payment", async () => {
    const m = await svc.newMerchant();
    const key = randomUUID();
    const b = body();
    // A real database failure at the insert (as in test/api/graphql/graphql.test.ts): a CHECK no new row passes (NOT VALID
    // holds it for new rows only). Tests of a file run one at a time: no other test sees it.
    await svc.deps.db.pool.query(`ALTER TABLE payments ADD CONSTRAINT idempotency_refuses_every_row CHECK (false) NOT VALID`);
    try {
      const failed = await create(b, m.apiKey, key);
      expect([failed.status, failed.body]).toEqual([500, { error: "Failed to create payment" }]);
      expect(await keyRow(key)).toMatchObject({ state: "processing", response_body: null, abandoned: true });
      // The retry runs again at once (no 409 in progress, no replayed 500)...
      const again = await create(b, m.apiKey, key);
      expect([again.status, again.body, again.headers.get("idempotent-replayed")]).toEqual([
        500,
        { error: "Failed to create payment" },
        null,
      ]);
      // ...while another body under the key is refused: the first may have done its work.
      const other = await create({ ...b, amount: "13" }, m.apiKey, key);
      expect([other.status, other.body]).toEqual([409, { error: otherRequest("body") }]);
    } finally {
      await svc.deps.db.pool.query(`ALTER TABLE payments DROP CONSTRAINT idempotency_refuses_every_row`);
    }
    expect(await paymentRows(m.id)).toHaveLength(0);
    const retry = await create(b, m.apiKey, key);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect((await paymentRows(m.id)).map((r) => r.id)).toEqual([idOf(retry.body.url)]);
    const replay = await create(b, m.apiKey, key);
    expect([replay.status, replay.body, replay.headers.get("idempotent-replayed")]).toEqual([200, retry.body, "true"]);
  });

  it("without a valid API key the header changes nothing: 401 as always, and nothing is stored", async () => {
    const key = randomUUID();
    const res = await create(body(), "sk_not_a_key", key);
    expect([res.status, res.body]).toEqual([401, { error: "Unauthorized" }]);
    const { rows } = await svc.deps.db.pool.query(`SELECT 1 FROM idempotency_keys WHERE key = $1`, [key]);
    expect(rows).toHaveLength(0);
  });
});

describe("Idempotency-Key on the other POSTs", () => {
  it("POST /v1/webhooks (regenerate-secret): a retry gets the same secret; another endpoint under the key is 409 in the route's body", async () => {
    const m = await svc.newMerchant();
    const put = await svc.http("PUT", "/v1/webhooks", { apiKey: m.apiKey, body: { url: "https://example.com/hook" } });
    expect(put.status, JSON.stringify(put.body)).toBe(201);

    const key = randomUUID();
    const regenerate = { action: "regenerate-secret" };
    const first = await post("/v1/webhooks", regenerate, m.apiKey, key);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, error: null, data: { secret: expect.stringMatching(/^whsec_/) } });
    const again = await post("/v1/webhooks", regenerate, m.apiKey, key);
    expect([again.status, again.body]).toEqual([200, first.body]);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    // The kept response holds a secret: stored sealed with SECRET_KEY, as the webhook's own row (secrets at rest).
    const stored = await keyRow(key);
    expect(stored?.response_body).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(stored?.text).not.toContain(first.body.data.secret);
    expect(stored?.text).not.toContain(first.body.data.secret.slice("whsec_".length));
    // Without the key the secret is regenerated again, as always.
    const plain = await post("/v1/webhooks", regenerate, m.apiKey);
    expect(plain.status).toBe(200);
    expect(plain.body.data.secret).not.toBe(first.body.data.secret);

    // The key is the API key's, whichever route: reusing it on POST /payments is 409 ({error}), and the webhook's key
    // on its own route with another body is 409 in the webhook's body.
    const elsewhere = await create(body(), m.apiKey, key);
    expect([elsewhere.status, elsewhere.body]).toEqual([409, { error: OTHER_ENDPOINT }]);
    const otherBody = await post("/v1/webhooks", { action: "rotate" }, m.apiKey, key);
    expect([otherBody.status, otherBody.body]).toEqual([409, { success: false, error: otherRequest("body"), data: null }]);
    // An invalid key is 400 in the route's body too.
    const invalid = await post("/v1/webhooks", regenerate, m.apiKey, "k".repeat(256));
    expect([invalid.status, invalid.body]).toEqual([400, { success: false, error: INVALID_KEY, data: null }]);
    expect(await paymentRows(m.id)).toHaveLength(0);
  });
});

describe("keys of two API keys of one merchant, each with its vault", () => {
  it("POST /vault/v1/users with the same key and body under key B is B's own user (B's vault, B's address), not A's answer", async () => {
    const m = await svc.newMerchant();
    const keyB = (await createApiKey(svc.deps.db, m.id)).key;
    const usdt = USDT().address;
    // One vault per API key, each with its own wallet: a user's deposit address differs between them.
    for (const apiKey of [m.apiKey, keyB]) {
      const vault = await svc.http("POST", "/vault/v1/config", {
        apiKey,
        body: {
          businessName: "Idempotent Vault",
          walletAddress: payout(),
          enabledTokens: [{ chainId: 777177, token: usdt, tokenSymbol: "USDT" }],
        },
      });
      expect(vault.status, JSON.stringify(vault.body)).toBe(201);
    }
    const key = randomUUID();
    const user = { externalUserId: "idempotent-user", chainId: 777177, tokenAddress: usdt };
    const a = await post("/vault/v1/users", user, m.apiKey, key);
    const b = await post("/vault/v1/users", user, keyB, key);
    for (const r of [a, b]) {
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.headers.get("idempotent-replayed")).toBeNull();
    }
    expect(b.body.data.depositAddress).not.toBe(a.body.data.depositAddress);
    for (const [apiKey, first] of [
      [m.apiKey, a],
      [keyB, b],
    ] as const) {
      // The address each key got is its own vault's user...
      const got = await svc.http("GET", `/vault/v1/users?externalUserId=idempotent-user&chainId=777177`, { apiKey });
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(got.body.data.depositAddress).toBe(first.body.data.depositAddress);
      // ...and each key's retry gets its own first response.
      const again = await post("/vault/v1/users", user, apiKey, key);
      expect([again.status, again.body, again.headers.get("idempotent-replayed")]).toEqual([201, first.body, "true"]);
    }
    const { rows } = await svc.deps.db.pool.query(`SELECT count(DISTINCT api_key_id)::int AS n FROM idempotency_keys WHERE key = $1`, [
      key,
    ]);
    expect(rows[0].n).toBe(2);
  });
});

describe("what is not kept", () => {
  it("415 and 409 from the route did nothing: the key is forgotten, and the request may run again", async () => {
    const m = await svc.newMerchant();
    const put = await svc.http("PUT", "/v1/webhooks", { apiKey: m.apiKey, body: { url: "https://example.com/hook" } });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    // 415: regenerate-secret takes JSON only, and the content type is not part of the fingerprint.
    const key = randomUUID();
    const regenerate = async (contentType: string) =>
      readResponse(
        await fetch(`${svc.url}/v1/webhooks`, {
          method: "POST",
          headers: { "x-api-key": m.apiKey, "idempotency-key": key, "content-type": contentType },
          body: JSON.stringify({ action: "regenerate-secret" }),
        }),
      );
    const wrong = await regenerate("text/plain");
    expect([wrong.status, wrong.body]).toEqual([415, { success: false, error: "Content-Type must be application/json", data: null }]);
    expect(await keyRow(key)).toBeUndefined();
    const right = await regenerate("application/json");
    expect(right.status).toBe(200);
    expect(right.body.data.secret).toMatch(/^whsec_/);
    expect(right.headers.get("idempotent-replayed")).toBeNull();

    // 409: a second cancel of a cancelled payment (a conflict of the payment's state, not of the key).
    const created = await create(body(), m.apiKey);
    const id = idOf(created.body.url);
    const cancelled = await post(`/v1/payments/${id}/cancel`, undefined, m.apiKey, randomUUID());
    expect([cancelled.status, cancelled.body]).toEqual([200, { success: true, error: null, data: { paymentId: id, status: "cancelled" } }]);
    const cancelKey = randomUUID();
    for (let i = 0; i < 2; i++) {
      const refused = await post(`/v1/payments/${id}/cancel`, undefined, m.apiKey, cancelKey);
      expect([refused.status, refused.body]).toEqual([409, { success: false, error: cannotCancelIn("cancelled"), data: null }]);
      expect(refused.headers.get("idempotent-replayed")).toBeNull();
      expect(await keyRow(cancelKey)).toBeUndefined();
    }
  });
});

const CREATE = `mutation Create($input: CreatePaymentInput!, $key: String) {
  createPayment(input: $input, idempotencyKey: $key) { url paymentId } }`;
const gql = (apiKey: string, variables: Record<string, unknown>) =>
  svc.http("POST", "/graphql", { apiKey, body: { query: CREATE, variables } });

describe("GraphQL: the idempotencyKey argument of mutations", () => {
  it("createPayment with a key: a retry returns the same payment; other arguments are a CONFLICT; a REST key is another endpoint's", async () => {
    const m = await svc.newMerchant();
    const key = randomUUID();
    const input = body();
    const first = await gql(m.apiKey, { input, key });
    expect(first.status).toBe(200);
    expect(first.body.errors, JSON.stringify(first.body.errors)).toBeUndefined();
    const created = first.body.data.createPayment;
    expect(created.url).toBe(`${svc.deps.config.appUrl}/pay/${created.paymentId}`);

    const again = await gql(m.apiKey, { input, key });
    expect(again.body).toEqual({ data: { createPayment: created } });
    expect((await paymentRows(m.id)).map((r) => r.id)).toEqual([created.paymentId]);

    const other = await gql(m.apiKey, { input: { ...input, amount: "13" }, key });
    expect(other.status).toBe(200);
    expect(other.body.data).toEqual({ createPayment: null });
    expect(other.body.errors).toEqual([
      expect.objectContaining({ message: otherRequest("arguments"), extensions: expect.objectContaining({ code: "CONFLICT", http: 409 }) }),
    ]);

    // One namespace per API key: a key first used on POST /payments is another endpoint's for the mutation.
    const restKey = randomUUID();
    expect((await create(body(), m.apiKey, restKey)).status).toBe(200);
    const crossed = await gql(m.apiKey, { input: body(), key: restKey });
    expect(crossed.body.errors).toEqual([
      expect.objectContaining({ message: OTHER_ENDPOINT, extensions: expect.objectContaining({ http: 409 }) }),
    ]);
    // Without the argument, as always: a new payment each time.
    const plain = await gql(m.apiKey, { input });
    expect(plain.body.data.createPayment.paymentId).not.toBe(created.paymentId);
    expect(await paymentRows(m.id)).toHaveLength(3);

    const invalid = await gql(m.apiKey, { input: body(), key: "" });
    expect(invalid.body.errors).toEqual([
      expect.objectContaining({ message: INVALID_KEY, extensions: expect.objectContaining({ http: 400 }) }),
    ]);
  });

  it("ten createPayment calls with one key, nine sent while the first holds its claim: one payment, nine CONFLICT in progress", async () => {
    const m = await svc.newMerchant();
    const key = randomUUID();
    const input = body();
    const [first, others] = await whilePaymentInsertWaits(
      () => gql(m.apiKey, { input, key }),
      () => Promise.all(Array.from({ length: 9 }, () => gql(m.apiKey, { input, key }))),
    );
    for (const r of others) {
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual({ createPayment: null });
      expect(r.body.errors).toEqual([
        expect.objectContaining({
          message: IN_PROGRESS,
          extensions: expect.objectContaining({ code: "CONFLICT", http: 409, retryAfter: 1 }),
        }),
      ]);
    }
    const rows = await paymentRows(m.id);
    expect(rows).toHaveLength(1);
    expect(first.body.errors, JSON.stringify(first.body.errors)).toBeUndefined();
    expect(first.body.data.createPayment.paymentId).toBe(rows[0]!.id);
    const retry = await gql(m.apiKey, { input, key });
    expect(retry.body).toEqual(first.body);
  });
});

// Last: moves the service's clock a day forward.
describe("expiry", () => {
  it("a key is kept 24 hours: after that the same key is a new request (another body is no longer a conflict)", async () => {
    const m = await svc.newMerchant();
    const key = randomUUID();
    const first = await create(body(), m.apiKey, key);
    expect(first.status).toBe(200);
    svc.clock.advance(DAY_MS - 60_000);
    const conflict = await create(body(), m.apiKey, key);
    expect(conflict.status).toBe(409);
    svc.clock.advance(60_000);
    const later = await create(body(), m.apiKey, key);
    expect(later.status, JSON.stringify(later.body)).toBe(200);
    expect(later.body.url).not.toBe(first.body.url);
    expect(later.headers.get("idempotent-replayed")).toBeNull();
    expect(await paymentRows(m.id)).toHaveLength(2);
  });
});
