import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createApiKey } from "../../../modules/merchants/index.js";
import { PAYMENT_STATUSES } from "../../../modules/payments/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { driveTo, pathTo } from "./fixtures/payment-states.js";

// GET /v1/payments through HTTP only (spec "GET /v1/payments", "Errors", "Limits"): order,
// cursor pagination over 250 payments, every filter, validation and isolation between merchants.
let svc: TestService;
/** Merchant A: 250 payments created through POST /payments with 3 API keys (100/min per key). */
let A: { id: string; keys: string[]; payments: { paymentId: string; orderId: string }[] };
/** Merchant B: 3 payments, two made before all of A's (older than any cursor of A), one reusing an orderId of A. */
let B: { id: string; apiKey: string; paymentIds: string[]; beforeA: string[] };
const TOTAL = 250;

const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const usdt = () => svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!;

async function create(apiKey: string, over: Record<string, unknown> = {}) {
  const body = { merchant: payout(), chainId: "777177", token: usdt().address, amount: "1.5", orderId: `order-${randomUUID()}`, ...over };
  const res = await svc.http("POST", "/payments", { body, apiKey });
  expect(res.status, `${JSON.stringify(res.body)} ${res.headers.get("ratelimit-policy")} ${res.headers.get("ratelimit")}`).toBe(200);
  return { paymentId: (res.body.url as string).split("/pay/")[1]!, orderId: body.orderId as string };
}

const get = (query: string, apiKey?: string) => svc.http("GET", `/v1/payments${query}`, { apiKey });
async function list(query: string, apiKey: string) {
  const res = await get(query, apiKey);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { data: any[]; nextCursor: string | null; hasMore: boolean };
}

/** Walks every page; checks the page invariants on the way. */
async function walk(apiKey: string, params: Record<string, string> = {}) {
  const items: any[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const q = new URLSearchParams(params);
    if (cursor) q.set("cursor", cursor);
    const body = await list(`?${q}`, apiKey);
    expect(Object.keys(body).sort()).toEqual(["data", "hasMore", "nextCursor"]);
    items.push(...body.data);
    sizes.push(body.data.length);
    if (!body.hasMore) {
      expect(body.nextCursor).toBeNull();
      return { items, sizes };
    }
    expect(typeof body.nextCursor).toBe("string");
    cursor = body.nextCursor;
  }
  throw new Error("pagination never ended");
}

/** Newest first; payments created in the same millisecond are ordered by id (descending), stably. */
const newestFirst = (a: any, b: any) => b.createdAt - a.createdAt || (a.paymentId < b.paymentId ? 1 : a.paymentId > b.paymentId ? -1 : 0);
const ids = (items: any[]) => items.map((p) => p.paymentId);
const sql = (text: string, args: unknown[]) => svc.deps.db.pool.query(text, args);

beforeAll(async () => {
  svc = await startTestService({ processors: false });
  const b = await svc.newMerchant();
  const beforeA = [(await create(b.apiKey)).paymentId, (await create(b.apiKey)).paymentId];
  const m = await svc.newMerchant();
  const keys = [m.apiKey, (await createApiKey(svc.deps.db, m.id, "second")).key, (await createApiKey(svc.deps.db, m.id, "third")).key];
  const payments: { paymentId: string; orderId: string }[] = [];
  // 84 + 83 + 83 creations, 10 at a time per key: concurrent creations share milliseconds, which the
  // order must break by id.
  const counts = keys.map((_, k) => Math.floor(TOTAL / 3) + (k < TOTAL % 3 ? 1 : 0));
  for (let done = 0; done < Math.max(...counts); done += 10) {
    // The keys share the merchant's 100 creations a minute: a minute passes between rounds of at most 30.
    // The clock moves only between rounds: a request that read the clock before a jump would otherwise find
    // the bucket filled by requests that read it after.
    svc.clock.advance(60_000);
    const round = keys.flatMap((key, k) => Array.from({ length: Math.max(0, Math.min(10, counts[k]! - done)) }, () => create(key)));
    payments.push(...(await Promise.all(round)));
  }
  A = { id: m.id, keys, payments };
  B = {
    id: b.id,
    apiKey: b.apiKey,
    beforeA,
    paymentIds: [...beforeA, (await create(b.apiKey, { orderId: payments[0]!.orderId })).paymentId],
  };
}, 120_000);
afterAll(() => svc?.stop());

describe("GET /v1/payments: order and cursor pagination", () => {
  it("250 payments, limit=7: every payment exactly once, newest first, then hasMore false and nextCursor null", async () => {
    expect(A.payments).toHaveLength(TOTAL);
    const { items, sizes } = await walk(A.keys[0]!, { limit: "7" });
    expect(sizes).toEqual([...Array(35).fill(7), 5]);
    expect(items).toHaveLength(TOTAL);
    expect(new Set(ids(items)).size).toBe(TOTAL);
    expect([...ids(items)].sort()).toEqual(A.payments.map((p) => p.paymentId).sort());
    expect(ids(items)).toEqual(ids([...items].sort(newestFirst)));
    // Same-millisecond creations exist, so the tie-break is really exercised.
    expect(new Set(items.map((p) => p.createdAt)).size).toBeLessThan(TOTAL);
  });

  it("limit=100 gives 100, 100, 50 in the same order; no limit means 100; any key of the merchant sees the same", async () => {
    const small = await walk(A.keys[1]!, { limit: "7" });
    const big = await walk(A.keys[2]!, { limit: "100" });
    expect(big.sizes).toEqual([100, 100, 50]);
    expect(ids(big.items)).toEqual(ids(small.items));
    const first = await list("", A.keys[0]!);
    expect(first.data).toHaveLength(100);
    expect(first.hasMore).toBe(true);
    expect(ids(first.data)).toEqual(ids(big.items).slice(0, 100));
    const max = await list("?limit=100", A.keys[0]!);
    expect(ids(max.data)).toEqual(ids(first.data));
    const one = await list("?limit=1", A.keys[0]!);
    expect(ids(one.data)).toEqual(ids(big.items).slice(0, 1));
    expect(one.hasMore).toBe(true);
    // The cursor of the first page of 100 continues where the default page ended.
    const next = await list(`?cursor=${encodeURIComponent(first.nextCursor!)}`, A.keys[0]!);
    expect(ids(next.data)).toEqual(ids(big.items).slice(100, 200));
  });

  it("a page exactly as large as what is left has hasMore false", async () => {
    const walked = await walk(A.keys[0]!, { limit: "50" });
    expect(walked.sizes).toEqual([50, 50, 50, 50, 50]);
    const all = await list(`?limit=100&orderId=${encodeURIComponent(A.payments[0]!.orderId)}`, A.keys[0]!);
    expect(all).toEqual({ data: [expect.objectContaining({ orderId: A.payments[0]!.orderId })], nextCursor: null, hasMore: false });
  });

  it("newest first by createdAt, to the millisecond", async () => {
    const m = await svc.newMerchant();
    const made = [];
    for (let i = 0; i < 4; i++) {
      made.push(await create(m.apiKey));
      svc.clock.advance(1);
    }
    const { data } = await list("", m.apiKey);
    expect(ids(data)).toEqual(made.map((p) => p.paymentId).reverse());
    for (let i = 1; i < data.length; i++) expect(data[i - 1].createdAt).toBeGreaterThan(data[i].createdAt);
  });

  it("keyset pages are stable: payments created during a walk neither repeat nor shift items", async () => {
    const m = await svc.newMerchant();
    const before = [];
    for (let i = 0; i < 3; i++) before.push(...(await Promise.all(Array.from({ length: 10 }, () => create(m.apiKey)))));
    const seen: string[] = [];
    let page = await list("?limit=8", m.apiKey);
    seen.push(...ids(page.data));
    const during = await Promise.all(Array.from({ length: 5 }, () => create(m.apiKey)));
    while (page.hasMore) {
      page = await list(`?limit=8&cursor=${encodeURIComponent(page.nextCursor!)}`, m.apiKey);
      seen.push(...ids(page.data));
    }
    expect(seen).toHaveLength(30);
    expect([...seen].sort()).toEqual(before.map((p) => p.paymentId).sort());
    expect((await list("?limit=5", m.apiKey)).data.map((p) => p.paymentId).sort()).toEqual(during.map((p) => p.paymentId).sort());
  });

  it("a cursor that is not one we issued -> 400 invalid_query (never a 500)", async () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    for (const cursor of [
      "garbage",
      "",
      b64(["2025-01-01T00:00:00.000000Z", "-".repeat(36)]),
      b64(["2025-01-01T00:00:00.000000Z", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz"]),
      b64(["2024", randomUUID()]),
      b64(["not a date at all 5", randomUUID()]),
      b64({ a: 1 }),
      // Issue 10: year 0 passed the grammar and failed in Postgres (500).
      b64(["0000-01-01T00:00:00.000000Z", randomUUID()]),
    ]) {
      const res = await get(`?cursor=${encodeURIComponent(cursor)}`, A.keys[0]);
      if (cursor === "") {
        // An empty cursor is no cursor: the first page.
        expect(res.status).toBe(200);
        continue;
      }
      expect(res.status, cursor).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String), code: "invalid_query" });
    }
  });
});

describe("GET /v1/payments: query validation", () => {
  it.each(["0", "101", "x", "-1", "1.5", "1e2", "", "100abc", "99999999999999999999"])(
    "limit=%j -> 400 {error, code: invalid_query}",
    async (limit) => {
      const res = await get(`?limit=${encodeURIComponent(limit)}`, A.keys[0]);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String), code: "invalid_query" });
      expect(res.body.error.length).toBeGreaterThan(0);
    },
  );

  it.each(["foo", "PENDING", "Completed", "pending,paid"])("status=%j -> 400 invalid_query", async (status) => {
    const res = await get(`?status=${encodeURIComponent(status)}`, A.keys[0]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.any(String), code: "invalid_query" });
  });

  it.each([
    ["createdAfter", "yesterday"],
    ["createdAfter", "hello 5"],
    ["createdBefore", "March 7, 2024"],
    ["createdAfter", "2024-02-30T00:00:00Z"],
    ["createdAfter", "2024-13-01"],
    ["createdBefore", "99999999999999999999"],
    ["createdAfter", "8640000000000001"],
    ["createdBefore", "1.5"],
    ["createdBefore", "-5"],
    ["createdAfter", ""],
    ["createdBefore", "-62198755200000"],
    // Issue 10: a NUL reached Postgres (500).
    ["orderId", "a\u0000b"],
  ])("%s=%j -> 400 invalid_query", async (param, value) => {
    const res = await get(`?${param}=${encodeURIComponent(value)}`, A.keys[0]);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toEqual({ error: expect.any(String), code: "invalid_query" });
  });
});

describe("GET /v1/payments: filters", () => {
  it("status: each of the 13 statuses is accepted; the filter returns exactly the payments in that status", async () => {
    expect(PAYMENT_STATUSES).toHaveLength(13);
    const m = await svc.newMerchant();
    // Two payments in every status (pending: the two left as created), put there through the state machine.
    const made = await Promise.all(Array.from({ length: 2 * PAYMENT_STATUSES.length }, () => create(m.apiKey)));
    const inStatus = new Map(PAYMENT_STATUSES.map((s, i) => [s, [made[2 * i]!.paymentId, made[2 * i + 1]!.paymentId].sort()]));
    // Every status of the spec is one the service enters: a chain of transitions leads there from `pending`.
    for (const s of PAYMENT_STATUSES) expect(pathTo("pending", s), `${s} reachable from pending`).not.toBeNull();
    for (const [status, paymentIds] of inStatus) {
      for (const id of paymentIds) {
        if (status === "pending") continue;
        const row = await driveTo(svc.deps, id, status);
        expect(row.status).toBe(status);
      }
    }
    for (const s of PAYMENT_STATUSES) {
      const res = await get(`?status=${s}`, m.apiKey);
      expect(res.status, s).toBe(200);
      const data = res.body.data as any[];
      expect(ids(data).sort(), s).toEqual(inStatus.get(s));
      for (const p of data) expect(p.status, s).toBe(s);
    }
    // Unfiltered: all 26, each with its status.
    const all = await walk(m.apiKey, { limit: "100" });
    expect(all.items).toHaveLength(made.length);
    for (const p of all.items) expect(inStatus.get(p.status), p.status).toContain(p.paymentId);
    // Walking a filtered list.
    const walked = await walk(m.apiKey, { status: "completed", limit: "1" });
    expect(walked.sizes).toEqual([1, 1]);
    expect(ids(walked.items).sort()).toEqual(inStatus.get("completed"));
    expect((await list("?status=pending", A.keys[0]!)).data).toHaveLength(100);
  });

  describe("createdAfter / createdBefore", () => {
    let m: { id: string; apiKey: string };
    let p: { paymentId: string; createdAt: number }[];
    beforeAll(async () => {
      m = await svc.newMerchant();
      p = [];
      for (let i = 0; i < 4; i++) {
        const c = await create(m.apiKey);
        const row = (await list(`?orderId=${encodeURIComponent(c.orderId)}`, m.apiKey)).data[0];
        p.push({ paymentId: c.paymentId, createdAt: row.createdAt });
        svc.clock.advance(1_000);
      }
    });
    const iso = (ms: number) => new Date(ms).toISOString();
    const range = async (q: Record<string, string>) => ids((await list(`?${new URLSearchParams(q)}`, m.apiKey)).data);

    it("both bounds inclusive, as Unix ms and as ISO 8601, in any mix", async () => {
      const expected = [p[2]!.paymentId, p[1]!.paymentId];
      expect(await range({ createdAfter: String(p[1]!.createdAt), createdBefore: String(p[2]!.createdAt) })).toEqual(expected);
      expect(await range({ createdAfter: iso(p[1]!.createdAt), createdBefore: iso(p[2]!.createdAt) })).toEqual(expected);
      expect(await range({ createdAfter: iso(p[1]!.createdAt), createdBefore: String(p[2]!.createdAt) })).toEqual(expected);
      expect(await range({ createdAfter: String(p[1]!.createdAt), createdBefore: iso(p[2]!.createdAt) })).toEqual(expected);
    });

    it("one millisecond past a bound excludes the payment on it", async () => {
      expect(await range({ createdAfter: String(p[1]!.createdAt + 1), createdBefore: String(p[2]!.createdAt) })).toEqual([p[2]!.paymentId]);
      expect(await range({ createdAfter: String(p[1]!.createdAt), createdBefore: String(p[2]!.createdAt - 1) })).toEqual([p[1]!.paymentId]);
      expect(await range({ createdAfter: iso(p[1]!.createdAt + 1), createdBefore: iso(p[2]!.createdAt - 1) })).toEqual([]);
    });

    it("one bound alone; equal bounds select the payment of that millisecond", async () => {
      expect(await range({ createdAfter: String(p[2]!.createdAt) })).toEqual([p[3]!.paymentId, p[2]!.paymentId]);
      expect(await range({ createdBefore: iso(p[1]!.createdAt) })).toEqual([p[1]!.paymentId, p[0]!.paymentId]);
      expect(await range({ createdAfter: String(p[2]!.createdAt), createdBefore: String(p[2]!.createdAt) })).toEqual([p[2]!.paymentId]);
    });

    it("other ISO 8601 forms: a UTC offset, whole seconds, basic format, a date alone", async () => {
      const t = p[1]!.createdAt;
      const d = new Date(t);
      const pad = (n: number, w = 2) => String(n).padStart(w, "0");
      // The same instant at +02:00.
      const local = new Date(t + 2 * 3_600_000);
      const offset = `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}.${pad(local.getUTCMilliseconds(), 3)}+02:00`;
      expect(await range({ createdAfter: offset, createdBefore: iso(p[2]!.createdAt) })).toEqual([p[2]!.paymentId, p[1]!.paymentId]);
      // The same, with the `+` left unencoded in the URL (it arrives as a space).
      const raw = await list(`?createdAfter=${offset}&createdBefore=${iso(p[2]!.createdAt)}`, m.apiKey);
      expect(ids(raw.data)).toEqual([p[2]!.paymentId, p[1]!.paymentId]);
      const basic = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}Z`;
      expect(await range({ createdAfter: basic, createdBefore: iso(p[2]!.createdAt) })).toEqual([p[2]!.paymentId, p[1]!.paymentId]);
      // Whole seconds: the bound is the start of that second.
      const second = iso(Math.floor(p[0]!.createdAt / 1000) * 1000).replace(".000Z", "Z");
      expect(await range({ createdAfter: second })).toEqual(ids([...p].reverse()));
      // A date alone is midnight UTC of that day.
      const tomorrow = new Date(p[3]!.createdAt + 86_400_000).toISOString().slice(0, 10);
      expect(await range({ createdBefore: tomorrow })).toEqual(ids([...p].reverse()));
      expect(await range({ createdAfter: tomorrow })).toEqual([]);
      expect(await range({ createdAfter: "0", createdBefore: "8640000000000000" })).toEqual(ids([...p].reverse()));
    });

    it("createdBefore earlier than createdAfter -> 400 invalid_query", async () => {
      for (const [after, before] of [
        [String(p[2]!.createdAt), String(p[2]!.createdAt - 1)],
        [iso(p[2]!.createdAt), iso(p[1]!.createdAt)],
        [iso(p[2]!.createdAt), String(p[1]!.createdAt)],
      ]) {
        const res = await get(`?createdAfter=${encodeURIComponent(after!)}&createdBefore=${encodeURIComponent(before!)}`, m.apiKey);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: expect.any(String), code: "invalid_query" });
      }
    });
  });

  it("orderId: exact and case-sensitive, any characters", async () => {
    const m = await svc.newMerchant();
    const tag = randomUUID().slice(0, 8);
    const names = [
      `Order-${tag}`,
      `order-${tag}`,
      `Order-${tag}-2`,
      `Order-${tag} `,
      `a b&c+d=e?f#g/${tag}`,
      `ümlaut-🧾-${tag}`,
      `%41-${tag}`,
    ];
    const made = new Map<string, string>();
    for (const orderId of names) made.set(orderId, (await create(m.apiKey, { orderId })).paymentId);
    for (const orderId of names) {
      const { data } = await list(`?orderId=${encodeURIComponent(orderId)}`, m.apiKey);
      expect(ids(data), orderId).toEqual([made.get(orderId)]);
      expect(data[0].orderId).toBe(orderId);
    }
    expect((await list(`?orderId=${encodeURIComponent(`ORDER-${tag}`)}`, m.apiKey)).data).toEqual([]);
    expect((await list(`?orderId=${encodeURIComponent(`Order-`)}`, m.apiKey)).data).toEqual([]);
    // With other filters.
    expect(ids((await list(`?orderId=${encodeURIComponent(`Order-${tag}`)}&status=pending`, m.apiKey)).data)).toEqual([
      made.get(`Order-${tag}`),
    ]);
    expect((await list(`?orderId=${encodeURIComponent(`Order-${tag}`)}&status=expired`, m.apiKey)).data).toEqual([]);
  });
});

describe("GET /v1/payments: authentication and isolation", () => {
  it("no credentials, an unknown key or a revoked key -> 401 {error, code: unauthorized}", async () => {
    const m = await svc.newMerchant();
    const revoked = await createApiKey(svc.deps.db, m.id, "revoked");
    await sql(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [revoked.id]);
    for (const apiKey of [undefined, "not-a-key", `${A.keys[0]}x`, revoked.key]) {
      const res = await get("", apiKey);
      expect(res.status, String(apiKey)).toBe(401);
      expect(res.body).toEqual({ error: "Unauthorized", code: "unauthorized" });
    }
    // Validation does not run before authentication: no query detail leaks without a key.
    expect((await get("?limit=0")).body).toEqual({ error: "Unauthorized", code: "unauthorized" });
  });

  it("a merchant never sees another merchant's payments, with any filter or cursor", async () => {
    const walked = await walk(B.apiKey, { limit: "2" });
    expect(ids(walked.items).sort()).toEqual([...B.paymentIds].sort());
    // The orderId that A also uses gives B only B's payment, and A only A's.
    const shared = A.payments[0]!.orderId;
    expect(ids((await list(`?orderId=${encodeURIComponent(shared)}`, B.apiKey)).data)).toEqual([B.paymentIds[2]]);
    expect(ids((await list(`?orderId=${encodeURIComponent(shared)}`, A.keys[0]!)).data)).toEqual([A.payments[0]!.paymentId]);
    // A's cursor used with B's key pages B's payments only: those older than the cursor's position.
    const aPage = await list("?limit=3", A.keys[0]!);
    const bWithA = await list(`?cursor=${encodeURIComponent(aPage.nextCursor!)}`, B.apiKey);
    expect(ids(bWithA.data).sort()).toEqual([...B.beforeA].sort());
    for (const p of bWithA.data) expect(B.paymentIds).toContain(p.paymentId);
    // A's full walk holds none of B's payments.
    const all = await walk(A.keys[0]!, { limit: "100" });
    for (const id of B.paymentIds) expect(ids(all.items)).not.toContain(id);
  });
});

describe("GET /v1/payments: item shape", () => {
  it("every item has the list output fields with the spec's types", async () => {
    const { data } = await list("?limit=20", A.keys[0]!);
    expect(data).toHaveLength(20);
    for (const p of data) {
      expect(p).toMatchObject({
        paymentId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        orderId: expect.any(String),
        status: "pending",
        createdAt: expect.any(Number),
        expiresAt: p.createdAt + 24 * 60 * 60 * 1000,
        chainId: "777177",
        token: { address: usdt().address, symbol: "USDT", decimals: 6 },
        amount: "1.5",
        merchant: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
        recipientAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
        fees: {
          platformFee: expect.any(String),
          gasFee: expect.any(String),
          processingFee: expect.any(String),
          totalFee: expect.any(String),
          feePercentage: expect.any(Number),
          agentFee: "0",
        },
        gasless: false,
        payerCoversFee: false,
        terminal: null,
        priceSource: "stablecoin",
      });
      expect(p.completedAt).toBeNull();
    }
  });
});
