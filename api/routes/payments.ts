import { Hono, type Context } from "hono";
import { getCookie } from "hono/cookie";
import { getBalance } from "../../modules/gas-tank/index.js";
import { cookiePrefix } from "../../core/cookies.js";
import { type Caller, SESSION_COOKIE } from "../../modules/merchants/index.js";
import { cancelPayment } from "../../modules/payments/index.js";
import { createPayment } from "../../modules/payments/index.js";
import { getPromoStatus } from "../../modules/payments/index.js";
import { getPayment, listPayments, recoverFunds } from "../../flows/payment-views.js";
import { verifyPayment } from "../../modules/payments/index.js";
import { withdrawPayment } from "../../modules/payments/index.js";
import { errorsAs } from "../errors.js";
import { keyCaller, requireApiKey } from "../middleware/api-key.js";
import { idempotencyUseOf } from "../middleware/idempotency.js";
import { jsonBody, queryOf } from "../middleware/input.js";
import { rateLimit } from "../middleware/rate-limit.js";
import type { AppEnv } from "../context.js";

/** /payments: creation (API key) and redirect verification (public; the hash is the proof). */
export const payments = new Hono<AppEnv>()
  .post("/", rateLimit("payments.create", { first: true }), errorsAs("plain", "Failed to create payment"), async (c) => {
    const body = await jsonBody(c, { invalid: "Invalid form data", contentType: "never" });
    // Under an Idempotency-Key, its use goes on the payment: a retry after a crash finds it (docs/payments.md "Idempotency keys").
    const created = await createPayment(c.var.deps, keyCaller(c), body, { idempotency: idempotencyUseOf(c) });
    // The spec's `{url}`, then the extension fields (docs/payments.md).
    const { url, paymentId, expiresAt, amountDue } = created;
    return c.json({ url, paymentId, expiresAt, amountDue });
  })
  .get("/verify", errorsAs("verify"), async (c) => {
    const q = queryOf(c);
    return c.json(await verifyPayment(c.var.deps, q.id, q.hash));
  });

/** The caller of the reads of /v1/payments: the API key when one is sent, else the dashboard's session cookie. */
const readCaller = (c: Context<AppEnv>): Caller =>
  c.req.header("x-api-key") ? keyCaller(c) : { session: getCookie(c, SESSION_COOKIE, cookiePrefix(c.var.deps.config)) };

/**
 * /v1/payments: the list and one payment by id (API key, or the dashboard's session cookie), manual withdraw of a partial payment,
 * cancel of a payment that received nothing, and recovery of unexpected funds to the payout (docs/unexpected-funds.md; "Unexpected
 * funds").
 */
export const paymentsV1 = new Hono<AppEnv>()
  .get("/", errorsAs("coded"), async (c) => c.json(await listPayments(c.var.deps, readCaller(c), queryOf(c))))
  // Extension: one payment as an item of the list, in the list's bodies (`{data}`; errors `{error, code}`).
  .get("/:id", errorsAs("coded"), async (c) => c.json({ data: await getPayment(c.var.deps, readCaller(c), c.req.param("id")) }))
  // The key is checked before the result envelope applies: a 401 here is `{error}`, as it always was.
  .post("/:id/withdraw", requireApiKey(), errorsAs("result"), async (c) =>
    c.json({ success: true, error: null, data: await withdrawPayment(c.var.deps, keyCaller(c), c.req.param("id")) }),
  )
  .post("/:id/cancel", requireApiKey(), errorsAs("result"), async (c) =>
    c.json({ success: true, error: null, data: await cancelPayment(c.var.deps, keyCaller(c), c.req.param("id")) }),
  )
  // The operator pays each recovery's gas: 10 requests a minute per merchant (docs/unexpected-funds.md).
  .post("/:id/recover", requireApiKey(), errorsAs("result"), rateLimit("payments.recover"), async (c) => {
    const body = await jsonBody(c);
    return c.json({ success: true, error: null, data: await recoverFunds(c.var.deps, keyCaller(c), c.req.param("id"), body) });
  });

/** GET /balance (the Gas Tank, USDT with 6 decimals, and beyond the spec where to fund it) and GET /promo-status. */
export const account = new Hono<AppEnv>()
  .get("/balance", rateLimit("balance", { first: true }), async (c) => c.json(await getBalance(c.var.deps, keyCaller(c))))
  .get("/promo-status", async (c) => c.json(await getPromoStatus(c.var.deps, keyCaller(c))));
