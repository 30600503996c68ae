import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../../helpers/service.js";
import { dashboardWith, FormClient, ODD_STATUS } from "./forms.js";

// Sign-up, log in, log out and the form token of the dashboard, over HTTP on the test stack.
let svc: TestService;
let origin: string;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  origin = new URL(svc.url).origin;
});
afterAll(() => svc?.stop());

const email = () => `m${Math.random().toString(36).slice(2)}@shop.example`;

describe("dashboard sign-up and login", () => {
  it("signs up, lands signed in, logs out and logs back in", async () => {
    const b = new FormClient(origin);
    const address = email();
    const up = await b.submit("/dashboard/signup", "/dashboard/signup", {
      name: "Shop",
      email: address,
      password: "correct horse battery",
    });
    expect(up.status).toBe(303);
    expect(up.location).toBe("/dashboard/api-keys");
    expect(b.cookie("cp_session")).toBeTruthy();
    // The session cookie is the one GET /api/v1/payments accepts (spec, Authentication 2).
    const list = await fetch(`${svc.url}/v1/payments`, { headers: { cookie: `cp_session=${b.cookie("cp_session")}` } });
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual({ data: [], nextCursor: null, hasMore: false });

    const out = await b.submit("/dashboard/login", "/dashboard/logout", {});
    expect(out.status).toBe(303);
    expect(b.cookie("cp_session")).toBeUndefined();
    expect((await b.get("/dashboard/payments")).location).toBe("/dashboard/login?next=%2Fdashboard%2Fpayments");

    const wrong = await b.submit("/dashboard/login", "/dashboard/login", { email: address, password: "not the password" });
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain("Invalid email or password");
    const ok = await b.submit("/dashboard/login", "/dashboard/login", {
      email: address,
      password: "correct horse battery",
      next: "/dashboard/webhooks",
    });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe("/dashboard/webhooks");
  });

  it("refuses short passwords and bad addresses, with the reason", async () => {
    const short = await new FormClient(origin).submit("/dashboard/signup", "/dashboard/signup", {
      name: "C",
      email: email(),
      password: "short",
    });
    expect(short.status).toBe(400);
    expect(short.html).toContain("Password must be at least 12 characters");
    const bad = await new FormClient(origin).submit("/dashboard/signup", "/dashboard/signup", {
      name: "D",
      email: "not-an-address",
      password: "correct horse battery",
    });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("Enter a valid e-mail address");
  });

  it("takes the status of a refused form from the mounting app's error mapping (api/errors.ts in the service)", async () => {
    const b = dashboardWith(svc.deps);
    const address = email();
    const up = await b.submit("/dashboard/signup", "/dashboard/signup", {
      name: "Shop",
      email: address,
      password: "correct horse battery",
    });
    expect(up.status).toBe(303);
    const short = await b.submit("/dashboard/signup", "/dashboard/signup", { name: "C", email: email(), password: "short" });
    expect(short.status).toBe(ODD_STATUS.invalid);
    expect(short.html).toContain("Password must be at least 12 characters");
    const wrong = await b.submit("/dashboard/login", "/dashboard/login", { email: address, password: "not the password" });
    expect(wrong.status).toBe(ODD_STATUS.unauthorized);
    expect(wrong.html).toContain("Invalid email or password");
  });

  // A 409 with the form told anyone whether an e-mail had an account.
  it("answers a sign-up with an e-mail that has an account exactly as a new one, and changes nothing", async () => {
    svc.clock.advance(60_000); // a fresh minute of this address's 5 sign-ups
    const address = email();
    const signUpAs = (name: string, mail: string, password: string) =>
      new FormClient(origin).submit("/dashboard/signup", "/dashboard/signup", { name, email: mail, password }).then((r) => ({
        ...r,
        setCookies: r.headers.getSetCookie(),
      }));
    const first = await signUpAs("Owner", address, "correct horse battery");
    const before = (await svc.deps.db.pool.query(`SELECT * FROM merchants WHERE email = $1`, [address])).rows;
    const sessions = async () => (await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM sessions`)).rows[0].n as number;
    const sessionsBefore = await sessions();

    const taken = await signUpAs("Squatter", address.toUpperCase(), "attacker password!");
    const fresh = await signUpAs("Fresh shop", email(), "correct horse battery");
    // The same status, place, body and cookies (names, attributes, token length); only the random values differ.
    const shape = (r: typeof taken) => ({
      status: r.status,
      location: r.location,
      html: r.html,
      cookies: r.setCookies.map((c) =>
        c
          .replace(/=[A-Za-z0-9_-]{43};/, "=<token>;")
          .replace(/Expires=[^;]+/, "Expires=<date>")
          .replace(/=[^;]+;/, (v) => (v === "=<token>;" ? v : "=<value>;")),
      ),
    });
    expect(shape(taken)).toEqual(shape(fresh));
    expect(shape(taken)).toEqual(shape(first));
    expect(taken.status).toBe(303);
    expect(taken.location).toBe("/dashboard/api-keys");
    const expires = (r: typeof taken) => Date.parse(/Expires=([^;]+)/.exec(r.setCookies.find((c) => c.startsWith("cp_session="))!)![1]!);
    expect(Math.abs(expires(taken) - expires(fresh))).toBeLessThan(5_000);

    // Nothing changed: the account, its password, and no session was made for it.
    expect((await svc.deps.db.pool.query(`SELECT * FROM merchants WHERE email = $1`, [address])).rows).toEqual(before);
    expect(await sessions()).toBe(sessionsBefore + 1); // the fresh shop's
    // The decoy opens nothing: the next page is the login form, as for an expired session.
    const b = new FormClient(origin);
    b.setCookie("cp_session", /cp_session=([^;]+)/.exec(taken.setCookies.join(";"))![1]!);
    expect((await b.get("/dashboard/api-keys")).location).toBe("/dashboard/login?next=%2Fdashboard%2Fapi-keys");
    const list = await fetch(`${svc.url}/v1/payments`, { headers: { cookie: `cp_session=${b.cookie("cp_session")}` } });
    expect(list.status).toBe(401);
    // The owner still logs in with their own password, not the one sent with the taken address.
    const owner = await new FormClient(origin).submit("/dashboard/login", "/dashboard/login", {
      email: address,
      password: "correct horse battery",
    });
    expect(owner.status).toBe(303);
    const squatter = await new FormClient(origin).submit("/dashboard/login", "/dashboard/login", {
      email: address,
      password: "attacker password!",
    });
    expect(squatter.status).toBe(401);
    svc.clock.advance(60_000); // and the next tests' sign-ups a fresh one
  });

  it("refuses a form without its token, or with another browser's token", async () => {
    const a = new FormClient(origin);
    const b = new FormClient(origin);
    const tokenOfB = FormClient.csrfOf((await b.get("/dashboard/signup")).html);
    await a.get("/dashboard/signup");
    const none = await a.post("/dashboard/signup", { name: "X", email: email(), password: "correct horse battery" });
    expect(none.status).toBe(403);
    const foreign = await a.post("/dashboard/signup", { _csrf: tokenOfB, name: "X", email: email(), password: "correct horse battery" });
    expect(foreign.status).toBe(403);
    // Nothing was created by the refused forms.
    const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM merchants WHERE name = 'X'`);
    expect(rows[0].n).toBe(0);
  });

  it("does not offer or accept sign-up when the operator closed it", async () => {
    const closed = await startTestService({ processors: false, env: { DASHBOARD_SIGNUP: "closed" } });
    try {
      const b = new FormClient(new URL(closed.url).origin);
      const page = await b.get("/dashboard/signup");
      expect(page.status).toBe(403);
      expect((await b.get("/dashboard/login")).html).not.toContain("/dashboard/signup");
      const res = await b.post("/dashboard/signup", {
        _csrf: FormClient.csrfOf((await b.get("/dashboard/login")).html),
        name: "Y",
        email: email(),
        password: "correct horse battery",
      });
      expect(res.status).toBe(403);
      expect(res.html).toContain("Sign-up is closed on this service");
    } finally {
      await closed.stop();
    }
  });

  it("refuses what no page sends as a 4xx, never a 500: NUL characters, other body types, unreadable forms", async () => {
    const b = new FormClient(origin);
    const csrf = FormClient.csrfOf((await b.get("/dashboard/login")).html);
    const nul = await b.post("/dashboard/login", { _csrf: csrf, email: "a\u0000@shop.example", password: "whatever whatever" });
    expect(nul.status).toBe(400);
    expect(nul.html).toBe("Invalid characters in the form");
    const signup = await b.post("/dashboard/signup", { _csrf: csrf, name: "N\u0000", email: email(), password: "correct horse battery" });
    expect(signup.status).toBe(400);
    expect((await b.get("/dashboard/login?next=%00")).status).toBe(400);
    expect((await b.get("/dashboard/payments/%00")).status).toBe(400);
    const multipart = new FormData();
    multipart.set("_csrf", csrf);
    multipart.set("email", "a@shop.example");
    const asMultipart = await fetch(`${origin}/dashboard/login`, { method: "POST", body: multipart });
    expect(asMultipart.status).toBe(415);
    const broken = await fetch(`${origin}/dashboard/login`, {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=x" },
      body: "--y\r\nnot a part",
    });
    expect(broken.status).toBe(415);
    const posNul = await fetch(`${origin}/pos/00000000-0000-4000-8000-000000000000?x=%00`);
    expect(posNul.status).toBe(400);
    const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM merchants WHERE name LIKE 'N%'`);
    expect(rows[0].n).toBe(0);
  });
});
