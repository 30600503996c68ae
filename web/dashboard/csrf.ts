import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { cookiePrefix, secureCookies } from "../../core/cookies.js";
import type { AppDeps } from "../../core/deps.js";
import { isCrossOrigin, originHeaders } from "../../core/same-origin.js";

/**
 * CSRF protection of every dashboard and POS form, three layers:
 * - origin: a state-changing request must come from the service's own origin (core/same-origin.ts). A page on
 *   another port of the host or a sibling subdomain is the same site but another origin: refused;
 * - a form token bound to the session: each form carries `_csrf` = HMAC(HASH_SECRET, browser cookie + session
 *   cookie). The browser's random `cp_csrf` cookie (HttpOnly, SameSite=Strict) alone is not enough: a same-site
 *   page can set ("toss") a cookie of its choosing, but without the victim's session (HttpOnly, never shown)
 *   it cannot compute the token that session's forms carry;
 * - `__Host-` cookie names with Secure cookies (core/cookies.ts), so that no other origin can toss them at all.
 * Forms posted by script send the same token in the `x-csrf-token` header. Mounted after form-input.ts.
 */
export const CSRF_COOKIE = "cp_csrf";
export const CSRF_FIELD = "_csrf";
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);
const REFUSED = "<!doctype html><title>Form expired</title><p>This form has expired. Go back, reload the page and try again.</p>";
const REFUSED_ORIGIN =
  "<!doctype html><title>Request refused</title><p>This form was sent from another site or address and was refused. Open the dashboard at the service's own address and try again.</p>";

/** The form token of a browser cookie and the session it is bound to (empty before sign-in). */
export const csrfTokenFor = (secret: string, cookie: string, session = "") =>
  createHmac("sha256", secret).update(`csrf:${cookie}:${session}`).digest("base64url");

function sameToken(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

type CsrfEnv = { Variables: { deps: AppDeps; csrf: string } };

/** The browser's form-token cookie (its `__Host-` name with Secure cookies). */
export const csrfCookieOf = (c: Context, deps: AppDeps): string | undefined => getCookie(c, CSRF_COOKIE, cookiePrefix(deps.config));

/** The token a form of this request must carry (sets the cookie on a first visit). */
function tokenOf(c: Context<CsrfEnv>, session: string): { token: string; fresh: boolean } {
  const config = c.var.deps.config;
  const cookie = csrfCookieOf(c, c.var.deps);
  if (cookie && /^[A-Za-z0-9_-]{43}$/.test(cookie)) return { token: csrfTokenFor(config.HASH_SECRET, cookie, session), fresh: false };
  const value = randomBytes(32).toString("base64url");
  setCookie(c, CSRF_COOKIE, value, {
    httpOnly: true,
    secure: secureCookies(config),
    sameSite: "Strict",
    path: "/",
    prefix: cookiePrefix(config),
  });
  return { token: csrfTokenFor(config.HASH_SECRET, value, session), fresh: true };
}

/**
 * The form guard: sets `c.var.csrf`; answers 403 to a state-changing request from another origin or without the
 * token of this browser and session. `sessionOf` reads the session cookie the token is bound to (dashboard or POS).
 */
export const csrfGuard = (sessionOf: (c: Context<CsrfEnv>) => string | undefined) =>
  createMiddleware<CsrfEnv>(async (c, next) => {
    const { token, fresh } = tokenOf(c, sessionOf(c) ?? "");
    c.set("csrf", token);
    if (!SAFE.has(c.req.method)) {
      // Forms post to their own page: a browser that says the post comes from another origin of the site is
      // refused even with an Origin of ours (APP_URL and BASE_URL may be two origins of one site).
      if (isCrossOrigin(c.var.deps.config, originHeaders(c.req), { strictSite: true })) return c.html(REFUSED_ORIGIN, 403);
      let sent = c.req.header("x-csrf-token");
      if (!sent) {
        // The body is an URL-encoded form that parses (form-input.ts runs first).
        const field = (await c.req.parseBody())[CSRF_FIELD];
        sent = typeof field === "string" ? field : undefined;
      }
      if (fresh || !sent || !sameToken(sent, token)) return c.html(REFUSED, 403);
    }
    await next();
  });
