import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { deleteWebhook, getWebhook, putWebhook, regenerateWebhookSecret } from "../../modules/webhooks/index.js";
import { getDelivery, listDeliveries, resendDelivery } from "../../modules/webhooks/index.js";
import { errorsAs } from "../errors.js";
import { requireApiKey } from "../middleware/api-key.js";
import { jsonBody, queryOf } from "../middleware/input.js";
import type { AppEnv } from "../context.js";

/**
 * Payment webhook configuration (/v1/webhooks) and delivery logs (/v1/webhooks/deliveries).
 * Every response is the spec's envelope `{success, error, data}`; errors come from api/errors.ts.
 */
export const webhooks = new Hono<AppEnv>();

const ok = (c: Context<AppEnv>, data: unknown, status: ContentfulStatusCode = 200) => c.json({ success: true, error: null, data }, status);

webhooks.use(
  "*",
  errorsAs("result"),
  requireApiKey(() => ({ success: false, error: "Unauthorized", data: null })),
);

/** GET /v1/webhooks: the configuration with its secret masked. */
webhooks.get("/", async (c) => ok(c, await getWebhook(c.var.deps, c.var.merchant.id)));

/** PUT /v1/webhooks: creates (201, whole secret) or updates (200, masked secret). */
webhooks.put("/", async (c) => {
  const r = await putWebhook(
    c.var.deps,
    { merchantId: c.var.merchant.id, apiKey: c.var.apiKey },
    await jsonBody(c, { contentType: "never" }),
  );
  return ok(c, r.webhook, r.created ? 201 : 200);
});

/** POST /v1/webhooks {action: 'regenerate-secret'}: a new secret, effective at once (queued retries included). */
webhooks.post("/", async (c) =>
  ok(c, await regenerateWebhookSecret(c.var.deps, c.var.merchant.id, await jsonBody(c, { contentType: "always" }))),
);

/** DELETE /v1/webhooks. */
webhooks.delete("/", async (c) => ok(c, await deleteWebhook(c.var.deps, c.var.merchant.id)));

const payments = (c: Context<AppEnv>) => ({ merchantId: c.var.merchant.id, kind: "payment" as const });

/** GET /v1/webhooks/deliveries: the delivery log, newest first (?limit&cursor&status&paymentId&event). */
webhooks.get("/deliveries", async (c) => ok(c, await listDeliveries(c.var.deps.db, payments(c), queryOf(c))));

/** GET /v1/webhooks/deliveries/:id: one delivery with its payload and every attempt. */
webhooks.get("/deliveries/:id", async (c) => ok(c, await getDelivery(c.var.deps.db, c.req.param("id"), payments(c))));

/** POST /v1/webhooks/deliveries/:id/resend: one more attempt, now (202). */
webhooks.post("/deliveries/:id/resend", async (c) =>
  ok(c, await resendDelivery(c.var.deps.db, c.req.param("id"), c.var.deps.now(), payments(c)), 202),
);
