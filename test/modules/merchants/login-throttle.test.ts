import { randomBytes, randomUUID, scryptSync } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { createMerchant } from "../../../modules/merchants/index.js";
import { clockedApi, newIp, readResponse } from "../../helpers/clocked-api.js";

// Dashboard login (issue 10, item 3): throttling per account and per address with exponential backoff,
// JSON bodies only, same-origin checks on the cookie routes, argon2id hashes (old ones upgraded at login).
// The clock stands still unless a test moves it.
const t = clockedApi();
// Counts are forgotten an hour after the last failure: each test starts clean.
beforeEach(() => t.clock.advance(2 * 60 * 60_000));

const PASSWORD = "correct horse battery staple";

async function account() {
  const email = `m.${randomUUID().slice(0, 8)}@example.com`;
  const m = await createMerchant(t.deps.db, { name: "Dashboard", email, password: PASSWORD });
  return { id: m.id, email };
}

async function post(path: string, o: { ip?: string; body?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(t.url + path, {
    method: "POST",
    headers: { "x-forwarded-for": o.ip ?? newIp(), ...o.headers },
    body: o.body,
  });
  return readResponse(res);
}
const login = (email: string, password: string, o: { ip?: string; headers?: Record<string, string> } = {}) =>
  post("/auth/login", {
    ip: o.ip,
    body: JSON.stringify({ email, password }),
    headers: { "content-type": "application/json", ...o.headers },
  });
const TOO_MANY = { error: "Too many login attempts" };

describe("throttling per account", () => {
  it("5 failures, then 429 with Retry-After even for the right password; waits double; success resets", async () => {
    const a = await account();
    // Before: 200 wrong passwords in a row were each answered 401 (~50 ms of scrypt each).
    for (let i = 0; i < 5; i++) expect((await login(a.email, `wrong-${i}`)).status).toBe(401);
    const locked = await login(a.email, PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.body).toEqual(TOO_MANY);
    expect(locked.headers.get("retry-after")).toBe("30");
    t.clock.advance(29_000);
    expect((await login(a.email, PASSWORD)).headers.get("retry-after")).toBe("1");
    t.clock.advance(1000);
    // Each further failure doubles the wait: 60 s, 120 s, … at most 15 minutes.
    expect((await login(a.email, "wrong-5")).status).toBe(401);
    expect((await login(a.email, PASSWORD)).headers.get("retry-after")).toBe("60");
    t.clock.advance(60_000);
    expect((await login(a.email, "wrong-6")).status).toBe(401);
    expect((await login(a.email, PASSWORD)).headers.get("retry-after")).toBe("120");
    t.clock.advance(120_000);
    expect((await login(a.email, PASSWORD)).status).toBe(200);
    // The count starts over after a success: 5 failures again before a wait.
    for (let i = 0; i < 4; i++) expect((await login(a.email, `again-${i}`)).status).toBe(401);
    expect((await login(a.email, PASSWORD)).status).toBe(200);
  });

  it("the wait is at most 15 minutes, and an hour without failures forgets the count", async () => {
    const a = await account();
    for (let i = 0; i < 12; i++) {
      expect((await login(a.email, `wrong-${i}`)).status).toBe(401);
      t.clock.advance(15 * 60_000);
    }
    expect((await login(a.email, "wrong")).status).toBe(401);
    expect((await login(a.email, PASSWORD)).headers.get("retry-after")).toBe("900");
    t.clock.advance(61 * 60_000);
    for (let i = 0; i < 4; i++) expect((await login(a.email, `later-${i}`)).status).toBe(401);
    expect((await login(a.email, PASSWORD)).status).toBe(200);
  });

  it("an unknown e-mail is throttled the same (no account discovery), case-insensitively", async () => {
    const email = `Nobody.${randomUUID()}@Example.com`;
    for (let i = 0; i < 5; i++) expect((await login(i % 2 ? email.toLowerCase() : email, "x")).status).toBe(401);
    expect(await login(email.toUpperCase(), "x")).toMatchObject({ status: 429, body: TOO_MANY });
  });

  it("concurrent guesses cannot all pass the check: 40 at once, at most 5 are checked", async () => {
    const a = await account();
    const res = await Promise.all(Array.from({ length: 40 }, (_, i) => login(a.email, `guess-${i}`)));
    const statuses = res.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(35);
  });
});

describe("throttling per address", () => {
  it("20 failures from one address (any accounts), then 429 for every login from it; other addresses are served", async () => {
    const ip = newIp();
    const a = await account();
    for (let i = 0; i < 20; i++) {
      expect((await login(`guess.${i}.${randomUUID()}@example.com`, "x", { ip })).status).toBe(401);
      t.clock.advance(3000); // below the address's 20 attempts a minute
    }
    const locked = await login(a.email, PASSWORD, { ip });
    expect(locked).toMatchObject({ status: 429, body: TOO_MANY });
    expect(locked.headers.get("retry-after")).toBe("27");
    expect((await login(a.email, PASSWORD, { ip: newIp() })).status).toBe(200);
    // A success elsewhere does not clear the address's count; its next failure doubles the wait.
    t.clock.advance(27_000);
    expect((await login("still@guessing.example", "x", { ip })).status).toBe(401);
    expect((await login(a.email, PASSWORD, { ip })).headers.get("retry-after")).toBe("60");
  });

  it("when an address's lock ends, concurrent guesses from it cannot all pass: one is checked, the rest wait again", async () => {
    const ip = newIp();
    for (let i = 0; i < 20; i++) {
      expect((await login(`lock.${i}.${randomUUID()}@example.com`, "x", { ip })).status).toBe(401);
      t.clock.advance(3000);
    }
    t.clock.advance(60_000); // the 30 s lock is over, and the address's per-minute budget is full again
    const res = await Promise.all(Array.from({ length: 15 }, (_, i) => login(`burst.${i}.${randomUUID()}@example.com`, "x", { ip })));
    const statuses = res.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(1);
    expect(statuses.filter((s) => s === 429)).toHaveLength(14);
  });

  it("attempts of an address: 20 a minute, whatever their outcome (each costs a password hash)", async () => {
    const ip = newIp();
    const a = await account();
    for (let i = 0; i < 20; i++) expect((await login(a.email, PASSWORD, { ip })).status).toBe(200);
    const limited = await login(a.email, PASSWORD, { ip });
    expect(limited).toMatchObject({ status: 429, body: TOO_MANY });
    expect(limited.headers.get("retry-after")).toBe("3");
    t.clock.advance(3000);
    expect((await login(a.email, PASSWORD, { ip })).status).toBe(200);
  });
});

describe("login CSRF", () => {
  it("a body that is not application/json is 415, even with valid JSON in it (a cross-site form can send text/plain)", async () => {
    const a = await account();
    const json = JSON.stringify({ email: a.email, password: PASSWORD });
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const res = await post("/auth/login", { body: json, headers: { "content-type": type } });
      expect(res.status, type).toBe(415);
      expect(res.body).toEqual({ error: "Content-Type must be application/json" });
      expect(res.headers.getSetCookie()).toEqual([]);
    }
    expect((await post("/auth/login", { body: json })).status).toBe(415);
    expect((await login(a.email, PASSWORD, { headers: { "content-type": "application/json; charset=utf-8" } })).status).toBe(200);
  });

  it("a request from another origin is 403 on login and logout; our own origin, or no browser at all, is served", async () => {
    const a = await account();
    const own = new URL(t.deps.config.baseUrl).origin;
    const refused = { status: 403, body: { error: "Cross-origin request refused" } };
    expect(await login(a.email, PASSWORD, { headers: { origin: "https://evil.example" } })).toMatchObject(refused);
    expect(await login(a.email, PASSWORD, { headers: { origin: "null" } })).toMatchObject(refused);
    expect(await login(a.email, PASSWORD, { headers: { "sec-fetch-site": "cross-site" } })).toMatchObject(refused);
    expect(await login(a.email, PASSWORD, { headers: { "sec-fetch-site": "same-site" } })).toMatchObject(refused);
    expect(await login(a.email, PASSWORD, { headers: { referer: "https://evil.example/page" } })).toMatchObject(refused);

    const ok = await login(a.email, PASSWORD, { headers: { origin: own, "sec-fetch-site": "same-origin" } });
    expect(ok.status).toBe(200);
    expect((await login(a.email, PASSWORD, { headers: { referer: `${own}/dashboard` } })).status).toBe(200);
    expect((await login(a.email, PASSWORD)).status).toBe(200);

    // Forced logout from another site is refused: the session still works.
    const cookie = ok.headers.getSetCookie()[0]!.split(";")[0]!;
    expect(await post("/auth/logout", { headers: { cookie, origin: "https://evil.example" } })).toMatchObject(refused);
    const list = () => fetch(`${t.url}/v1/payments`, { headers: { cookie } });
    expect((await list()).status).toBe(200);
    expect((await post("/auth/logout", { headers: { cookie, origin: own } })).status).toBe(200);
    expect((await list()).status).toBe(401);
  });
});

describe("password hashes", () => {
  it("new passwords are argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane)", async () => {
    const a = await account();
    const { rows } = await t.deps.db.pool.query(`SELECT password_hash FROM merchants WHERE id = $1`, [a.id]);
    // Before: scrypt at N=16384 (`scrypt$salt$key`).
    expect(rows[0].password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  });

  it("an old scrypt hash still logs in and is replaced by argon2id; a wrong password changes nothing", async () => {
    const a = await account();
    // As hashes were written before: Node's default scrypt cost (N=2^14), `scrypt$<salt hex>$<key hex>`.
    const salt = randomBytes(16);
    const legacy = `scrypt$${salt.toString("hex")}$${scryptSync(PASSWORD, salt, 32).toString("hex")}`;
    await t.deps.db.pool.query(`UPDATE merchants SET password_hash = $1 WHERE id = $2`, [legacy, a.id]);
    const hash = async () =>
      (await t.deps.db.pool.query(`SELECT password_hash FROM merchants WHERE id = $1`, [a.id])).rows[0].password_hash;
    expect((await login(a.email, "wrong")).status).toBe(401);
    expect(await hash()).toBe(legacy);
    expect((await login(a.email, PASSWORD)).status).toBe(200);
    const upgraded = await hash();
    expect(upgraded).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect((await login(a.email, PASSWORD)).status).toBe(200);
    expect(await hash()).toBe(upgraded);
  });
});
