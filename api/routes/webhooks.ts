import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { deleteWebhookConfig, getWebhookConfig, putWebhookConfig, regenerateWebhookSecret, validatePutWebhook, viewWebhookConfig } from "../../modules/webhooks/config.js";
import { getDelivery, listDeliveries, parseListQuery, resendDelivery } from "../../modules/webhooks/deliveries.js";
import { requireApiKey } from "../middleware/api-key.js";
import type { AppEnv } from "../context.js";

/**
 * Payment webhook configuration (/v1/webhooks) and delivery logs (/v1/webhooks/deliveries).
 * Every response is the spec's envelope `{success, error, data}`; see lib/webhooks/README.md.
 */
export const webhooks = new Hono<AppEnv>();

const ok = (c: Context<AppEnv>, data: unknown, status: ContentfulStatusCode = 200) => c.json({ success: true, error: null, data }, status);
const fail = (c: Context<AppEnv>, error: string, status: ContentfulStatusCode) => c.json({ success: false, error, data: null }, status);
const NOT_CONFIGURED = "Webhook not configured";

const auth = requireApiKey(() => ({ success: false, error: "Unauthorized", data: null }));
webhooks.use("/v1/webhooks/*", auth); // also matches /v1/webhooks itself

const readJson = async (c: Context<AppEnv>): Promise<{ ok: true; body: unknown } | { ok: false }> => {
  try {
    return { ok: true, body: await c.req.json() };
  } catch {
    return { ok: false };
  }
};

const guard = (name: string, handler: (c: Context<AppEnv>) => Promise<Response>) => async (c: Context<AppEnv>) => {
  try {
    return await handler(c);
  } catch (e) {
    console.error(`[webhooks] ${name} failed`, e);
    return fail(c, "Internal server error", 500);
  }
};

/** GET /v1/webhooks: the configuration with its secret masked. */
webhooks.get(
  "/v1/webhooks",
  guard("get", async (c) => {
    const row = await getWebhookConfig(c.var.deps.db, c.var.merchant.id);
    return row ? ok(c, viewWebhookConfig(row)) : fail(c, NOT_CONFIGURED, 404);
  }),
);

/** PUT /v1/webhooks: creates (201, whole secret) or updates (200, masked secret). */
webhooks.put(
  "/v1/webhooks",
  guard("put", async (c) => {
    const deps = c.var.deps;
    const json = await readJson(c);
    if (!json.ok) return fail(c, "Invalid JSON body", 400);
    const v = await validatePutWebhook(json.body, { allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE === true });
    if (!v.ok) return fail(c, v.error, 400);
    const r = await putWebhookConfig(deps.db, c.var.merchant.id, v.input, c.var.apiKey, deps.now());
    if (!r.ok) return fail(c, r.error, r.status);
    return ok(c, viewWebhookConfig(r.row, { revealSecret: r.created }), r.created ? 201 : 200);
  }),
);

/** POST /v1/webhooks {action: 'regenerate-secret'}: a new secret, effective at once (queued retries included). */
webhooks.post(
  "/v1/webhooks",
  guard("regenerate", async (c) => {
    const deps = c.var.deps;
    if (!/^application\/json\b/i.test(c.req.header("content-type") ?? "")) return fail(c, "Content-Type must be application/json", 415);
    const json = await readJson(c);
    if (!json.ok) return fail(c, "Invalid JSON body", 400);
    const action = (json.body as { action?: unknown } | null)?.action;
    if (action !== "regenerate-secret") return fail(c, "Unknown action; expected {\"action\": \"regenerate-secret\"}", 400);
    const row = await regenerateWebhookSecret(deps.db, c.var.merchant.id, deps.now());
    return row ? ok(c, { secret: row.secret }) : fail(c, NOT_CONFIGURED, 404);
  }),
);

/** DELETE /v1/webhooks. */
webhooks.delete(
  "/v1/webhooks",
  guard("delete", async (c) => {
    const deleted = await deleteWebhookConfig(c.var.deps.db, c.var.merchant.id, c.var.deps.now());
    return deleted ? ok(c, { deleted: true }) : fail(c, NOT_CONFIGURED, 404);
  }),
);

/** GET /v1/webhooks/deliveries: the delivery log, newest first (?limit&cursor&status&paymentId&event). */
webhooks.get(
  "/v1/webhooks/deliveries",
  guard("list deliveries", async (c) => {
    const q = parseListQuery(c.req.query());
    if (!q.ok) return fail(c, q.error, 400);
    return ok(c, await listDeliveries(c.var.deps.db, c.var.merchant.id, { ...q.filters, kind: "payment" }));
  }),
);

/** GET /v1/webhooks/deliveries/:id: one delivery with its payload and every attempt. */
webhooks.get(
  "/v1/webhooks/deliveries/:id",
  guard("get delivery", async (c) => {
    const d = await getDelivery(c.var.deps.db, c.req.param("id")!, c.var.merchant.id);
    return d && d.kind === "payment" ? ok(c, d) : fail(c, "Delivery not found", 404);
  }),
);

/** POST /v1/webhooks/deliveries/:id/resend: one more attempt, now (202). */
webhooks.post(
  "/v1/webhooks/deliveries/:id/resend",
  guard("resend", async (c) => {
    const d = await getDelivery(c.var.deps.db, c.req.param("id")!, c.var.merchant.id);
    if (!d || d.kind !== "payment") return fail(c, "Delivery not found", 404);
    const r = await resendDelivery(c.var.deps.db, d.id, c.var.deps.now(), c.var.merchant.id);
    return r.ok ? ok(c, r.delivery, 202) : fail(c, r.error, r.status);
  }),
);
