import { getCookie } from "hono/cookie";
import { cookiePrefix } from "../../core/cookies.js";
import { createMiddleware } from "hono/factory";
import { merchantIdForSession, SESSION_COOKIE } from "../../modules/merchants/index.js";
import type { DashEnv } from "./env.js";

/**
 * The session guard of every dashboard screen: the `cp_session` cookie (`__Host-cp_session` in production; the one GET /api/v1/payments accepts)
 * must name a live session; the merchant is loaded into `c.var.merchant`. Without one, a page view goes to the
 * login page (coming back here after), anything else gets 401.
 */
export const requireSession = createMiddleware<DashEnv>(async (c, next) => {
  const deps = c.var.deps;
  const token = getCookie(c, SESSION_COOKIE, cookiePrefix(deps.config));
  const merchantId = await merchantIdForSession(deps.db, token, deps.now());
  const { rows } = merchantId
    ? await deps.db.pool.query(`SELECT id, name, email, merchant_type, platform_fee_bps, promo_used FROM merchants WHERE id = $1`, [
        merchantId,
      ])
    : { rows: [] };
  const m = rows[0];
  if (!m || !token) {
    if (c.req.method !== "GET") return c.text("Your session has ended: log in again.", 401);
    const next = new URL(c.req.url);
    return c.redirect(`/dashboard/login?next=${encodeURIComponent(next.pathname + next.search)}`, 303);
  }
  c.set("session", token);
  c.set("merchant", {
    id: m.id,
    name: m.name,
    email: m.email,
    merchantType: m.merchant_type,
    platformFeeBps: m.platform_fee_bps,
    promoUsed: m.promo_used,
  });
  c.header("Cache-Control", "no-store");
  await next();
});
