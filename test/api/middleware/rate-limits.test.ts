import { randomBytes } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { IP_AUTH_FAILURES_PER_MINUTE, IP_REQUESTS_PER_MINUTE } from "../../../api/middleware/ip-limits.js";
import { createApiKey, createMerchant } from "../../../modules/merchants/index.js";
import { clockedApi, newIp, readResponse } from "../../helpers/clocked-api.js";

// Rate limits (issue 10, item 5): buckets per merchant account shared by REST and GraphQL and by every key
// of the merchant, token buckets with no window boundary, and per-address limits before any key is looked
// up. The clock stands still unless a test moves it, so every count is exact.
const t = clockedApi();
// Each test starts with full buckets.
beforeEach(() => t.clock.advance(10 * 60_000));

async function call(method: string, path: string, o: { key?: string; ip: string; body?: unknown; headers?: Record<string, string> }) {
  const headers: Record<string, string> = { "x-forwarded-for": o.ip, ...o.headers };
  if (o.key !== undefined) headers["x-api-key"] = o.key;
  if (o.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(t.url + path, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  return readResponse(res);
}

/** An invalid creation: 400 after the limit counted it (the limit comes before the body). */
const restCreate = (key: string, ip: string) => call("POST", "/payments", { key, ip, body: {} });
const gqlCreate = (key: string, ip: string) =>
  call("POST", "/graphql", {
    key,
    ip,
    body: {
      query: `mutation ($bad: CreatePaymentInput!) { createPayment(input: $bad) { url } }`,
      variables: { bad: { merchant: "0x0", chainId: "777177", token: "0x0", amount: "1", orderId: "" } },
    },
  });
const gqlLimited = (res: { body: any }) => res.body.errors?.[0]?.extensions?.code === "RATE_LIMITED";
const restLimited = (res: { status: number }) => res.status === 429;

async function merchantWithKeys(n: number) {
  const m = await createMerchant(t.deps.db, { name: "Rate limited" });
  const keys: string[] = [];
  for (let i = 0; i < n; i++) keys.push((await createApiKey(t.deps.db, m.id, `key ${i}`)).key);
  return { id: m.id, keys };
}

/** Sends `n` requests, `batch` at a time; the responses in order. */
async function burst<T>(n: number, send: (i: number) => Promise<T>, batch = 20): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += batch)
    out.push(...(await Promise.all(Array.from({ length: Math.min(batch, n - i) }, (_, j) => send(i + j)))));
  return out;
}

describe("one budget per merchant account", () => {
  it("every key of a merchant takes from the same 100 creations a minute", async () => {
    const m = await merchantWithKeys(3);
    const ip = newIp();
    const first = await burst(99, (i) => restCreate(m.keys[i % 3]!, ip));
    expect(first.filter(restLimited)).toHaveLength(0);
    expect((await restCreate(m.keys[2]!, ip)).status).toBe(400);
    // The 101st, whichever key sends it, is refused: before, each key had 100 of its own.
    for (const key of m.keys) {
      const res = await restCreate(key, ip);
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: "Too many requests" });
      expect(res.headers.get("ratelimit")).toBe("limit=100, remaining=0, reset=60");
      expect(res.headers.get("ratelimit-policy")).toBe("100;w=60");
      expect(res.headers.get("retry-after")).toBe("1");
    }
    // Another merchant is not affected.
    expect((await restCreate((await merchantWithKeys(1)).keys[0]!, ip)).status).toBe(400);
  });

  it("GraphQL's createPayment takes from POST /payments' bucket: 50 + 50, then both refuse", async () => {
    const m = await merchantWithKeys(2);
    const ip = newIp();
    expect((await burst(50, () => restCreate(m.keys[0]!, ip))).filter(restLimited)).toHaveLength(0);
    const viaGraphql = await burst(50, () => gqlCreate(m.keys[1]!, ip));
    for (const res of viaGraphql) expect(res.body.errors[0].extensions.code).toBe("BAD_USER_INPUT");
    const limited = await gqlCreate(m.keys[1]!, ip);
    expect(limited.body.errors[0]).toMatchObject({
      message: "Too many requests",
      extensions: { code: "RATE_LIMITED", http: 429, retryAfter: 1 },
    });
    expect((await restCreate(m.keys[0]!, ip)).status).toBe(429);
  });

  it("GraphQL's balance takes from GET /balance's bucket (60 a minute)", async () => {
    const m = await merchantWithKeys(1);
    const ip = newIp();
    const key = m.keys[0]!;
    expect((await burst(30, () => call("GET", "/balance", { key, ip }))).map((r) => r.status)).toEqual(Array(30).fill(200));
    const ten = `{ ${Array.from({ length: 10 }, (_, i) => `b${i}: balance { balance }`).join(" ")} }`;
    for (let i = 0; i < 3; i++) expect((await call("POST", "/graphql", { key, ip, body: { query: ten } })).body.errors).toBeUndefined();
    expect((await call("GET", "/balance", { key, ip })).status).toBe(429);
    expect(gqlLimited(await call("POST", "/graphql", { key, ip, body: { query: "{ balance { balance } }" } }))).toBe(true);
  });
});

describe("token buckets: no double burst at a minute boundary", () => {
  it("100 creations just before a minute starts and 100 just after: 101 get through, not 200", async () => {
    const m = await merchantWithKeys(1);
    const ip = newIp();
    t.clock.set(Math.ceil(t.clock.now() / 60_000) * 60_000 + 60_000 - 500);
    const before = await burst(100, () => restCreate(m.keys[0]!, ip));
    t.clock.advance(1000); // now 0.5 s into the next minute
    const after = await burst(100, () => restCreate(m.keys[0]!, ip));
    const through = [...before, ...after].filter((r) => r.status !== 429).length;
    // A fixed window let all 200 through. A bucket refills one creation every 600 ms: 1 in that second.
    expect(before.filter(restLimited)).toHaveLength(0);
    expect(through).toBe(101);
    // Refilled at the steady rate, one every 600 ms (that second left 400 ms towards the next), all after a minute.
    t.clock.advance(199);
    expect((await restCreate(m.keys[0]!, ip)).status).toBe(429);
    t.clock.advance(1);
    expect((await restCreate(m.keys[0]!, ip)).status).toBe(400);
    t.clock.advance(599);
    expect((await restCreate(m.keys[0]!, ip)).status).toBe(429);
    t.clock.advance(1);
    expect((await restCreate(m.keys[0]!, ip)).status).toBe(400);
    t.clock.advance(60_000);
    const res = await restCreate(m.keys[0]!, ip);
    expect(res.status).toBe(400);
    expect(res.headers.get("ratelimit")).toBe("limit=100, remaining=99, reset=1");
  });
});

describe("per address, before any key is looked up", () => {
  it(`random keys: ${IP_AUTH_FAILURES_PER_MINUTE} are answered 401, then 429 without a lookup or a row per key`, async () => {
    const ip = newIp();
    const balance = (key: string, from = ip) => call("GET", "/balance", { key, ip: from });
    const randomKey = () => `pk_live_${randomBytes(16).toString("hex")}`;
    const res = await burst(300, () => balance(randomKey()), 30);
    const statuses = res.map((r) => r.status);
    // Before: 300 × 401, each writing a counter row of its own.
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(IP_AUTH_FAILURES_PER_MINUTE);
    expect(statuses.filter((s) => s === 401).length).toBeLessThan(IP_AUTH_FAILURES_PER_MINUTE + 30); // one batch may race the count
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(200);
    expect(res.find((r) => r.status === 429)!.headers.get("retry-after")).toBe("2");
    // Rows: the address's requests, its failures and its keyless GET /balance calls, none per key.
    const rows = async () => (await t.deps.db.pool.query(`SELECT key FROM rate_limit_buckets`)).rows.map((r) => r.key as string);
    expect((await rows()).filter((k) => k.includes(ip)).sort()).toEqual([
      `ip:${ip}:auth-failures`,
      `ip:${ip}:balance`,
      `ip:${ip}:requests`,
    ]);
    const before = new Set(await rows());
    await burst(100, () => balance(randomKey()));
    expect((await rows()).filter((k) => !before.has(k))).toEqual([]);
    // Even a valid key is refused from that address until a failure refills (one every 2 s); other addresses are served.
    const m = await merchantWithKeys(1);
    expect((await balance(m.keys[0]!)).status).toBe(429);
    expect((await balance(m.keys[0]!, newIp())).status).toBe(200);
    // Requests without a key are not refused for the failures (public routes keep working).
    expect((await call("GET", "/payments/verify", { ip })).status).toBe(400);
    t.clock.advance(2000);
    expect((await balance(m.keys[0]!)).status).toBe(200);
    expect((await balance("pk_live_wrong")).status).toBe(401);
    expect((await balance(m.keys[0]!)).status).toBe(429);
  });

  it(`every request of an address counts: ${IP_REQUESTS_PER_MINUTE} a minute`, async () => {
    const ip = newIp();
    const res = await burst(IP_REQUESTS_PER_MINUTE, () => call("GET", "/payments/verify", { ip }), 50);
    expect(res.filter((r) => r.status === 429)).toHaveLength(0);
    const limited = await call("GET", "/payments/verify", { ip });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: "Too many requests" });
    expect((await call("GET", "/payments/verify", { ip: newIp() })).status).toBe(400);
  });

  it("an IPv6 client counts by its /64: its other addresses are the same client", async () => {
    const v6 = `2001:db8:${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}:`;
    const res = await burst(IP_AUTH_FAILURES_PER_MINUTE, (i) => call("GET", "/balance", { key: "pk_live_wrong", ip: `${v6}:${i + 1}` }));
    expect(res.map((r) => r.status)).toEqual(Array(IP_AUTH_FAILURES_PER_MINUTE).fill(401));
    expect((await call("GET", "/balance", { key: "pk_live_wrong", ip: `${v6}abcd:1:2:3` })).status).toBe(429);
    expect((await call("GET", "/balance", { key: "pk_live_wrong", ip: `2001:db8:ffff:ffff::1` })).status).toBe(401);
  });
});

describe("pruning", () => {
  it("full buckets (time in the past) are deleted", async () => {
    const { prune } = await import("../../../api/middleware/rate-limit-store.js");
    const m = await merchantWithKeys(1);
    await restCreate(m.keys[0]!, newIp());
    const count = async () => (await t.deps.db.pool.query(`SELECT count(*)::int AS n FROM rate_limit_buckets`)).rows[0].n as number;
    expect(await count()).toBeGreaterThan(0);
    t.clock.advance(61_000);
    await prune(t.deps.db, t.clock.now());
    expect(await count()).toBe(0);
  });
});
