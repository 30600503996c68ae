import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { hashPassword, verifyPassword } from "../../modules/merchants/merchants.js";
import { createSession, deleteSession, SESSION_COOKIE } from "../../modules/merchants/sessions.js";
import type { AppEnv } from "../context.js";

// The e-mail is only looked up: any address an account was created with must be able to log in.
const login = z.object({ email: z.string().min(1), password: z.string().min(1) });

/** Checked when no account matches, so an unknown e-mail costs as much as a wrong password (no account discovery by timing). */
let dummyHash: Promise<string> | undefined;

/** Dashboard login: POST /auth/login sets the session cookie accepted by GET /v1/payments. */
export const auth = new Hono<AppEnv>()
  .post("/auth/login", async (c) => {
    const deps = c.var.deps;
    const parsed = login.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) return c.json({ error: "Invalid form data" }, 400);
    const { rows } = await deps.db.pool.query(`SELECT id, password_hash FROM merchants WHERE email = $1`, [parsed.data.email.toLowerCase()]);
    const m = rows[0];
    const ok = await verifyPassword(parsed.data.password, m?.password_hash ?? (await (dummyHash ??= hashPassword("no account"))));
    if (!m?.password_hash || !ok) return c.json({ error: "Invalid email or password" }, 401);
    const session = await createSession(deps.db, m.id, deps.now());
    setCookie(c, SESSION_COOKIE, session.token, {
      httpOnly: true,
      secure: deps.config.NODE_ENV === "production",
      sameSite: "Lax",
      path: "/",
      expires: session.expiresAt,
    });
    return c.json({ success: true, merchantId: m.id, expiresAt: session.expiresAt.getTime() });
  })
  .post("/auth/logout", async (c) => {
    const token = getCookie(c, SESSION_COOKIE);
    if (token) await deleteSession(c.var.deps.db, token);
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.json({ success: true });
  });
