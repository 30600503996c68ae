import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { cookiePrefix, secureCookies } from "../../core/cookies.js";
import { login, logout, SESSION_COOKIE } from "../../modules/merchants/index.js";
import { errorsAs } from "../errors.js";
import { jsonBody } from "../middleware/input.js";
import { clientIp, ipBucket, rateLimit } from "../middleware/rate-limit.js";
import { sameOrigin } from "../middleware/same-origin.js";
import type { AppEnv } from "../context.js";

/**
 * Dashboard login: POST /auth/login sets the session cookie accepted by GET /v1/payments. Both routes change
 * cookie state, so both must come from our own origin (403 otherwise: login CSRF, forced logout).
 */
export const auth = new Hono<AppEnv>()
  .use(errorsAs("plain"), sameOrigin)
  // JSON only: an HTML form can send text/plain or form bodies across sites without a preflight, never JSON.
  .post("/login", rateLimit("auth.login"), async (c) => {
    const deps = c.var.deps;
    const session = await login(deps, await jsonBody(c, { invalid: "Invalid form data", contentType: "always" }), ipBucket(clientIp(c)));
    setCookie(c, SESSION_COOKIE, session.token, {
      httpOnly: true,
      secure: secureCookies(deps.config),
      prefix: cookiePrefix(deps.config),
      sameSite: "Lax",
      path: "/",
      expires: session.expiresAt,
    });
    return c.json({ success: true, merchantId: session.merchantId, expiresAt: session.expiresAt.getTime() });
  })
  .post("/logout", async (c) => {
    const prefix = cookiePrefix(c.var.deps.config);
    await logout(c.var.deps, getCookie(c, SESSION_COOKIE, prefix));
    deleteCookie(c, SESSION_COOKIE, { path: "/", secure: secureCookies(c.var.deps.config), prefix });
    return c.json({ success: true });
  });
