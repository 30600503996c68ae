import { Hono, type Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { cookiePrefix, secureCookies } from "../../core/cookies.js";
import { isDomainError } from "../../core/errors.js";
import { login, logout, SESSION_COOKIE } from "../../modules/merchants/index.js";
import { signUp } from "../../flows/sign-up.js";
import type { DashEnv } from "./env.js";
import { bare, CsrfField, Notice } from "./layout.js";

/**
 * Log in, sign up and log out: HTML forms posting to themselves. A failure re-renders the form with the
 * module's message and the status the mounting app gives its error (`c.var.statusOf`: 401 wrong password,
 * 429 throttled, 403 sign-up closed). A sign-up with an e-mail that has an account is answered as a new one
 * (modules/merchants/signup.ts: a decoy session), so the answer does not tell which addresses have accounts.
 * `clientIp` is the mounting app's notion of the caller's address (used by the login throttle).
 */
export function authPages(clientIp: (c: Context) => string) {
  const safeNext = (v: unknown) => (typeof v === "string" && /^\/dashboard(\/[A-Za-z0-9/_?=&%.-]*)?$/.test(v) ? v : "/dashboard");

  const startSession = (c: Context<DashEnv>, s: { token: string; expiresAt: Date }) =>
    setCookie(c, SESSION_COOKIE, s.token, {
      httpOnly: true,
      secure: secureCookies(c.var.deps.config),
      prefix: cookiePrefix(c.var.deps.config),
      sameSite: "Lax",
      path: "/",
      expires: s.expiresAt,
    });

  const LoginForm = (p: { csrf: string; next: string; email?: string; error?: string; signupOpen: boolean }) => (
    <section class="card narrow">
      {p.error ? <Notice kind="error">{p.error}</Notice> : null}
      <form method="post" action="/dashboard/login">
        <CsrfField csrf={p.csrf} />
        <input type="hidden" name="next" value={p.next} />
        <label>
          E-mail
          <input type="email" name="email" required autocomplete="username" value={p.email ?? ""} />
        </label>
        <label>
          Password
          <input type="password" name="password" required autocomplete="current-password" />
        </label>
        <button type="submit">Log in</button>
      </form>
      {p.signupOpen ? (
        <p>
          No account? <a href="/dashboard/signup">Sign up</a>
        </p>
      ) : null}
    </section>
  );

  const SignupForm = (p: { csrf: string; name?: string; email?: string; referralCode?: string; error?: string }) => (
    <section class="card narrow">
      {p.error ? <Notice kind="error">{p.error}</Notice> : null}
      <form method="post" action="/dashboard/signup">
        <CsrfField csrf={p.csrf} />
        <label>
          Business name
          <input type="text" name="name" required maxlength={100} value={p.name ?? ""} />
        </label>
        <label>
          E-mail
          <input type="email" name="email" required autocomplete="username" value={p.email ?? ""} />
        </label>
        <label>
          Password <small>(at least 12 characters)</small>
          <input type="password" name="password" required minlength={12} autocomplete="new-password" />
        </label>
        <label>
          Referral code <small>(optional: from the agent who referred you)</small>
          <input type="text" name="referralCode" maxlength={32} autocomplete="off" value={p.referralCode ?? ""} />
        </label>
        <button type="submit">Create account</button>
      </form>
      <p>
        Have an account? <a href="/dashboard/login">Log in</a>
      </p>
    </section>
  );

  const str = (v: unknown) => (typeof v === "string" ? v : "");

  return new Hono<DashEnv>()
    .get("/login", (c) =>
      bare(
        c,
        { title: "Log in" },
        <LoginForm csrf={c.var.csrf} next={safeNext(c.req.query("next"))} signupOpen={c.var.deps.config.DASHBOARD_SIGNUP === "open"} />,
      ),
    )
    .post("/login", async (c) => {
      const form = await c.req.parseBody();
      const next = safeNext(form.next);
      try {
        const session = await login(c.var.deps, { email: str(form.email), password: str(form.password) }, clientIp(c));
        startSession(c, session);
        return c.redirect(next, 303);
      } catch (err) {
        if (!isDomainError(err)) throw err;
        if (err.kind === "rate_limited" && err.details?.retryAfter) c.header("Retry-After", String(err.details.retryAfter));
        return bare(
          c,
          { title: "Log in", status: c.var.statusOf(err) },
          <LoginForm
            csrf={c.var.csrf}
            next={next}
            email={str(form.email)}
            error={err.message}
            signupOpen={c.var.deps.config.DASHBOARD_SIGNUP === "open"}
          />,
        );
      }
    })
    .get("/signup", (c) =>
      c.var.deps.config.DASHBOARD_SIGNUP === "open"
        ? // An agent's referral link (/dashboard/signup?ref=CODE) fills the code in.
          bare(c, { title: "Sign up" }, <SignupForm csrf={c.var.csrf} referralCode={str(c.req.query("ref")).slice(0, 32)} />)
        : bare(c, { title: "Sign up", status: 403 }, <Notice kind="error">Sign-up is closed on this service.</Notice>),
    )
    .post("/signup", async (c) => {
      const form = await c.req.parseBody();
      try {
        const session = await signUp(c.var.deps, {
          name: str(form.name),
          email: str(form.email),
          password: str(form.password),
          referralCode: str(form.referralCode).trim() || undefined,
        });
        startSession(c, session); // a decoy for a taken e-mail: the next page is the login form
        return c.redirect("/dashboard/api-keys", 303);
      } catch (err) {
        if (!isDomainError(err)) throw err;
        return bare(
          c,
          { title: "Sign up", status: c.var.statusOf(err) },
          <SignupForm
            csrf={c.var.csrf}
            name={str(form.name)}
            email={str(form.email)}
            referralCode={str(form.referralCode)}
            error={err.message}
          />,
        );
      }
    })
    .post("/logout", async (c) => {
      const prefix = cookiePrefix(c.var.deps.config);
      await logout(c.var.deps, getCookie(c, SESSION_COOKIE, prefix));
      deleteCookie(c, SESSION_COOKIE, { path: "/", secure: secureCookies(c.var.deps.config), prefix });
      return c.redirect("/dashboard/login", 303);
    });
}
