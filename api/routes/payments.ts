import { Hono } from "hono";
import { getCookie } from "hono/cookie";
import { isUuid } from "../../core/ids.js";
import { merchantIdForSession, SESSION_COOKIE } from "../../modules/merchants/sessions.js";
import { createPayment } from "../../modules/payments/create.js";
import { gasTankView } from "../../modules/gas-tank/gas-tank.js";
import { listPayments } from "../../modules/payments/list.js";
import { promoStatus } from "../../modules/payments/promo.js";
import { validateCreatePayment } from "../../modules/payments/validate-create.js";
import { verifyPayment } from "../../modules/payments/verify.js";
import { requestWithdraw } from "../../modules/payments/withdraw.js";
import { merchantForKey, requireApiKey } from "../middleware/api-key.js";
import { perMinute } from "../middleware/rate-limit.js";
import type { AppEnv } from "../context.js";


export const payments = new Hono<AppEnv>();

/** POST /payments: checks in the spec's order: form, addresses, network, amount, then the key. */
payments.post("/payments", perMinute(100), async (c) => {
  const deps = c.var.deps;
  const raw = await c.req.json().catch(() => undefined);
  const v = validateCreatePayment(raw, { chains: deps.chains, now: deps.now() });
  if (!v.ok) return c.json({ error: v.error }, 400);
  const merchant = await merchantForKey(deps, c.req.header("x-api-key"));
  if (!merchant) return c.json({ error: "Unauthorized" }, 401);
  try {
    const r = await createPayment(deps, merchant, v.input);
    if (!r.ok) return c.json({ error: r.error }, r.status);
    return c.json({ url: r.url });
  } catch (e) {
    console.error("[payments] create failed", e);
    return c.json({ error: "Failed to create payment" }, 500);
  }
});

/** GET /v1/payments: API key or dashboard session cookie. */
payments.get("/v1/payments", async (c) => {
  const deps = c.var.deps;
  try {
    const key = c.req.header("x-api-key");
    const merchantId = key
      ? (await merchantForKey(deps, key))?.id
      : await merchantIdForSession(deps.db, getCookie(c, SESSION_COOKIE), deps.now());
    if (!merchantId) return c.json({ error: "Unauthorized", code: "unauthorized" }, 401);
    const r = await listPayments(deps, merchantId, c.req.query());
    if (!r.ok) return c.json({ error: r.error, code: "invalid_query" }, 400);
    return c.json(r.body);
  } catch (e) {
    console.error("[payments] list failed", e);
    return c.json({ error: "Internal server error", code: "internal_error" }, 500);
  }
});

/** GET /payments/verify: public; the hash is the proof. */
payments.get("/payments/verify", async (c) => {
  const r = await verifyPayment(c.var.deps, c.req.query("id"), c.req.query("hash"));
  return c.json(r.body, r.status);
});

/** GET /balance: Gas Tank balance (USDT, 6 decimals) and, beyond the spec, where to fund it. */
payments.get("/balance", perMinute(60), requireApiKey(), async (c) => c.json(await gasTankView(c.var.deps, c.var.merchant.id)));

payments.get("/promo-status", requireApiKey(), async (c) => {
  return c.json({ freeTransactions: await promoStatus(c.var.deps.db.pool, c.var.merchant) });
});

/** POST /v1/payments/{paymentId}/withdraw: manual withdraw of a partial payment (payments/withdraw.ts). */
payments.post("/v1/payments/:id/withdraw", requireApiKey(), async (c) => {
  const deps = c.var.deps;
  const id = c.req.param("id");
  if (!isUuid(id)) return c.json({ success: false, error: "Payment not found", data: null }, 404);
  const out = await requestWithdraw(deps.db, c.var.merchant.id, id, deps.now());
  if (!out.ok) return c.json({ success: false, error: out.error, data: null }, out.status);
  return c.json({ success: true, error: null, data: out.data });
});
