import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ACCOUNT_THROTTLE, TOO_MANY_LOGINS, ARGON2, SESSION_TTL_MS } from "../../../modules/merchants/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Spec "Authentication" 2 and 4: GET /v1/payments accepts an active dashboard session cookie in place
// of the API key. The dashboard login (POST /auth/login) sets it; POST /auth/logout ends it.
let svc: TestService;
type M = { id: string; apiKey: string; email: string; password: string; paymentIds: string[] };
let owner: M;
let other: M;

async function merchantWithPayments(email: string, password: string, n: number): Promise<M> {
  const m = await svc.newMerchant({ email, password });
  const usdt = svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!;
  const paymentIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const body = {
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      chainId: "777177",
      token: usdt.address,
      amount: "2",
      orderId: `order-${randomUUID()}`,
    };
    const res = await svc.http("POST", "/payments", { body, apiKey: m.apiKey });
    expect(res.status).toBe(200);
    paymentIds.push(res.body.url.split("/pay/")[1]);
  }
  return { ...m, email, password, paymentIds };
}

beforeAll(async () => {
  svc = await startTestService({ processors: false });
  owner = await merchantWithPayments(`Owner.${randomUUID().slice(0, 8)}@Example.com`, "correct horse battery staple", 3);
  other = await merchantWithPayments(`other.${randomUUID().slice(0, 8)}@example.com`, "another secret", 2);
});
afterAll(() => svc?.stop());

// Each login from an address of its own: logins are limited per address (test/modules/merchants/login-throttle.test.ts).
let ips = 0;
const login = (body: unknown) =>
  svc.http("POST", "/auth/login", { body, headers: { "x-forwarded-for": `198.18.${++ips >> 8}.${ips & 255}` } });
/** The cp_session value of a Set-Cookie header, and the header itself. */
function sessionCookie(headers: Headers) {
  const set = headers.getSetCookie().find((c) => c.startsWith("cp_session="));
  return { header: set, value: set?.split(";")[0]!.slice("cp_session=".length) };
}
async function loginCookie(m: M) {
  const res = await login({ email: m.email, password: m.password });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return sessionCookie(res.headers).value!;
}
const listWith = (cookie: string | undefined, query = "", apiKey?: string) =>
  svc.http("GET", `/v1/payments${query}`, { apiKey, headers: cookie === undefined ? {} : { cookie: `cp_session=${cookie}` } });
const idsOf = (res: { body: any }) => (res.body.data as any[]).map((p) => p.paymentId).sort();

describe("dashboard session cookie on GET /v1/payments", () => {
  it("login sets an HttpOnly cp_session cookie that lists the merchant's payments in place of the key", async () => {
    const before = svc.clock.now();
    const res = await login({ email: owner.email, password: owner.password });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, merchantId: owner.id, expiresAt: expect.any(Number) });
    expect(res.body.expiresAt).toBeGreaterThanOrEqual(before + SESSION_TTL_MS);
    const { header, value } = sessionCookie(res.headers);
    expect(value).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(header).toMatch(/; HttpOnly/);
    expect(header).toMatch(/; Path=\//);
    expect(header).toMatch(/; SameSite=Lax/);
    const expires = /; Expires=([^;]+)/.exec(header!)?.[1];
    expect(Math.abs(Date.parse(expires!) - res.body.expiresAt)).toBeLessThan(1000);

    const list = await listWith(value);
    expect(list.status).toBe(200);
    expect(idsOf(list)).toEqual([...owner.paymentIds].sort());
    expect(list.body.hasMore).toBe(false);
    // Pagination and filters work the same with the cookie.
    const page = await listWith(value, "?limit=2");
    expect(page.body.data).toHaveLength(2);
    const rest = await listWith(value, `?limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`);
    expect([...idsOf(page), ...idsOf(rest)].sort()).toEqual([...owner.paymentIds].sort());
    expect((await listWith(value, "?limit=0")).body).toEqual({ error: expect.any(String), code: "invalid_query" });
  });

  it("each merchant's cookie shows only that merchant's payments", async () => {
    const [a, b] = [await loginCookie(owner), await loginCookie(other)];
    expect(idsOf(await listWith(a))).toEqual([...owner.paymentIds].sort());
    expect(idsOf(await listWith(b))).toEqual([...other.paymentIds].sort());
  });

  it("the e-mail is matched case-insensitively", async () => {
    const res = await login({ email: owner.email.toUpperCase(), password: owner.password });
    expect(res.status).toBe(200);
    expect(res.body.merchantId).toBe(owner.id);
  });

  it("an API key, when sent, decides: another merchant's key with my cookie lists that merchant's payments; a bad key is 401", async () => {
    const cookie = await loginCookie(owner);
    expect(idsOf(await listWith(cookie, "", other.apiKey))).toEqual([...other.paymentIds].sort());
    expect(await listWith(cookie, "", "not-a-key")).toMatchObject({ status: 401, body: { error: "Unauthorized", code: "unauthorized" } });
  });

  it("a missing, malformed or unknown cookie -> 401 {error, code: unauthorized}", async () => {
    const valid = await loginCookie(owner);
    // One character changed (to one it is not, or the "tampered" cookie could be the valid one).
    const tampered = valid.slice(0, -1) + (valid.endsWith("A") ? "B" : "A");
    for (const cookie of [undefined, "", "garbage", "x".repeat(43), tampered]) {
      const res = await listWith(cookie);
      expect(res.status, String(cookie)).toBe(401);
      expect(res.body).toEqual({ error: "Unauthorized", code: "unauthorized" });
    }
    // A cookie of another name is no session.
    const good = await loginCookie(owner);
    const res = await svc.http("GET", "/v1/payments", { headers: { cookie: `session=${good}` } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "Unauthorized", code: "unauthorized" });
  });

  it("the cookie is only for GET /v1/payments: API-key endpoints refuse it", async () => {
    const cookie = await loginCookie(owner);
    const headers = { cookie: `cp_session=${cookie}` };
    const usdt = svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!;
    const body = {
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      chainId: "777177",
      token: usdt.address,
      amount: "1",
      orderId: "cookie",
    };
    expect(await svc.http("POST", "/payments", { body, headers })).toMatchObject({ status: 401, body: { error: "Unauthorized" } });
    for (const path of ["/balance", "/promo-status"]) {
      const res = await svc.http("GET", path, { headers });
      expect(res.status, path).toBe(401);
      expect(res.body, path).toEqual({ error: "Unauthorized" });
    }
  });
});

describe("POST /auth/login errors", () => {
  it("wrong password and unknown e-mail give the same 401; a merchant without a password cannot log in", async () => {
    const wrong = await login({ email: owner.email, password: "wrong" });
    const unknown = await login({ email: `nobody.${randomUUID()}@example.com`, password: "wrong" });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body).toEqual({ error: "Invalid email or password" });
    expect(sessionCookie(wrong.headers).header).toBeUndefined();
    const keyOnly = await svc.newMerchant({ email: `keyonly.${randomUUID().slice(0, 8)}@example.com` });
    const { rows } = await svc.deps.db.pool.query(`SELECT email FROM merchants WHERE id = $1`, [keyOnly.id]);
    expect(await login({ email: rows[0].email, password: "" })).toMatchObject({ status: 400, body: { error: "Invalid form data" } });
    expect(await login({ email: rows[0].email, password: "anything" })).toMatchObject({
      status: 401,
      body: { error: "Invalid email or password" },
    });
  });

  it("any e-mail an account was created with can log in (no stricter e-mail syntax at login than at sign-up)", async () => {
    for (const email of [`ops.${randomUUID().slice(0, 8)}@localhost`, `o'brien.${randomUUID().slice(0, 8)}@example.com`]) {
      await svc.newMerchant({ email, password: "pw-123456" });
      const res = await login({ email, password: "pw-123456" });
      expect(res.status, `${email}: ${JSON.stringify(res.body)}`).toBe(200);
      expect((await listWith(sessionCookie(res.headers).value)).status).toBe(200);
    }
  });

  it("an unknown e-mail is answered and throttled exactly like a wrong password (no account discovery)", async () => {
    // The account's hash is argon2id with today's parameters (an unknown e-mail is checked against a dummy one of
    // them, sessions.ts: how long that takes is not measured here).
    const known = await merchantWithPayments(`known.${randomUUID().slice(0, 8)}@example.com`, "known secret", 0);
    const { rows } = await svc.deps.db.pool.query(`SELECT password_hash FROM merchants WHERE id = $1`, [known.id]);
    const argon2id = `$argon2id$v=19$m=${ARGON2.memoryCost},t=${ARGON2.timeCost},p=${ARGON2.parallelism}$`;
    expect((rows[0].password_hash as string).startsWith(argon2id)).toBe(true);

    // Time stands still: the lock's Retry-After is exact. Each login comes from an address of its own, so only the
    // account's count (login-throttle.ts: kept per e-mail, whether or not an account has it) is spent.
    svc.clock.freeze();
    onTestFinished(() => svc.clock.resume());
    const answers = async (email: string) => {
      const out: { status: number; body: unknown; retryAfter: string | null; cookie: string | undefined }[] = [];
      for (let i = 0; i <= ACCOUNT_THROTTLE.free; i++) {
        const res = await login({ email, password: `wrong-${i}` });
        out.push({
          status: res.status,
          body: res.body,
          retryAfter: res.headers.get("retry-after"),
          cookie: sessionCookie(res.headers).header,
        });
      }
      return out;
    };
    const wrong = await answers(known.email);
    const unknown = await answers(`nobody.${randomUUID()}@example.com`);
    const refused = { status: 401, body: { error: "Invalid email or password" }, retryAfter: null, cookie: undefined };
    // The failure budget: `free` failures answered 401, then the account is locked for 30 s.
    const locked = { status: 429, body: { error: TOO_MANY_LOGINS }, retryAfter: String(ACCOUNT_THROTTLE.baseMs / 1000), cookie: undefined };
    expect(wrong).toEqual([...Array<typeof refused>(ACCOUNT_THROTTLE.free).fill(refused), locked]);
    expect(unknown).toEqual(wrong);
  });

  it("a malformed body -> 400 Invalid form data", async () => {
    for (const body of [
      "{nope",
      {},
      { email: owner.email },
      { password: "x" },
      { email: 5, password: "x" },
      { email: owner.email, password: 5 },
    ]) {
      expect(await login(body), JSON.stringify(body)).toMatchObject({ status: 400, body: { error: "Invalid form data" } });
    }
  });
});

describe("session end", () => {
  it("logout clears the cookie and ends that session only", async () => {
    const a = await loginCookie(owner);
    const b = await loginCookie(owner);
    const res = await svc.http("POST", "/auth/logout", { headers: { cookie: `cp_session=${a}` } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    const cleared = sessionCookie(res.headers);
    expect(cleared.value).toBe("");
    expect(cleared.header).toMatch(/Max-Age=0|Expires=Thu, 01 Jan 1970/);
    expect(await listWith(a)).toMatchObject({ status: 401, body: { error: "Unauthorized", code: "unauthorized" } });
    expect((await listWith(b)).status).toBe(200);
    // Logging out without a session is harmless.
    expect((await svc.http("POST", "/auth/logout")).status).toBe(200);
  });

  it("a session works until it expires (7 days), then 401", async () => {
    const cookie = await loginCookie(owner);
    svc.clock.advance(SESSION_TTL_MS - 60_000);
    expect((await listWith(cookie)).status).toBe(200);
    svc.clock.advance(60_001);
    expect(await listWith(cookie)).toMatchObject({ status: 401, body: { error: "Unauthorized", code: "unauthorized" } });
    // A fresh login works again.
    expect((await listWith(await loginCookie(owner))).status).toBe(200);
  });
});
