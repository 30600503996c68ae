import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { login, logout, SESSION_COOKIE } from "../../modules/merchants/sessions.js";
import { errorsAs } from "../errors.js";
import type { AppEnv } from "../context.js";

/** Dashboard login: POST /auth/login sets the session cookie accepted by GET /v1/payments. */
export const auth = new Hono<AppEnv>()
  .use(errorsAs("plain"))
  .post("/login", async (c) => {
    const deps = c.var.deps;
    const session = await login(deps, await c.req.json().catch(() => null));
    setCookie(c, SESSION_COOKIE, session.token, {
      httpOnly: true,
      secure: deps.config.NODE_ENV === "production",
      sameSite: "Lax",
      path: "/",
      expires: session.expiresAt,
    });
    return c.json({ success: true, merchantId: session.merchantId, expiresAt: session.expiresAt.getTime() });
  })
  .post("/logout", async (c) => {
    await logout(c.var.deps, getCookie(c, SESSION_COOKIE));
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.json({ success: true });
  });
