import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import type { DashEnv } from "./env.js";

/**
 * CSRF protection of every dashboard and POS form (double submit, signed): the browser holds a random
 * `cp_csrf` cookie (HttpOnly, SameSite=Strict); each form carries `_csrf` = HMAC(HASH_SECRET, cookie). A
 * state-changing request is accepted only when the field matches the cookie it came with. Another site can
 * neither read the cookie nor compute the field, and SameSite=Strict keeps the cookie off its requests.
 * Forms posted by script send the same token in the `x-csrf-token` header. Mounted after form-input.ts.
 */
export const CSRF_COOKIE = "cp_csrf";
export const CSRF_FIELD = "_csrf";
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export const csrfTokenFor = (secret: string, cookie: string) => createHmac("sha256", secret).update(`csrf:${cookie}`).digest("base64url");

function sameToken(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The token a form of this request must carry (sets the cookie on a first visit). */
function tokenOf(c: Context<DashEnv>): { token: string; fresh: boolean } {
  const secret = c.var.deps.config.HASH_SECRET;
  const cookie = getCookie(c, CSRF_COOKIE);
  if (cookie && /^[A-Za-z0-9_-]{43}$/.test(cookie)) return { token: csrfTokenFor(secret, cookie), fresh: false };
  const value = randomBytes(32).toString("base64url");
  setCookie(c, CSRF_COOKIE, value, {
    httpOnly: true,
    secure: c.var.deps.config.NODE_ENV === "production",
    sameSite: "Strict",
    path: "/",
  });
  return { token: csrfTokenFor(secret, value), fresh: true };
}

/** Sets `c.var.csrf`; answers 403 to a state-changing request without the matching token. */
export const csrf = createMiddleware<DashEnv>(async (c, next) => {
  const { token, fresh } = tokenOf(c);
  c.set("csrf", token);
  if (!SAFE.has(c.req.method)) {
    let sent = c.req.header("x-csrf-token");
    if (!sent) {
      // The body is an URL-encoded form that parses (form-input.ts runs first).
      const field = (await c.req.parseBody())[CSRF_FIELD];
      sent = typeof field === "string" ? field : undefined;
    }
    if (fresh || !sent || !sameToken(sent, token))
      return c.html("<!doctype html><title>Form expired</title><p>This form has expired. Go back, reload the page and try again.</p>", 403);
  }
  await next();
});
