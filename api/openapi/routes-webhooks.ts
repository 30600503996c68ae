import { deliveriesQuery } from "../../modules/webhooks/index.js";
import { PRIVATE_TARGET_ERROR } from "../../modules/webhooks/index.js";
import { BAD_JSON, fail, NOT_JSON, NOT_OBJECT, TOO_LARGE, type Operation } from "./operation.js";

// Payment webhook configuration and delivery logs (api/routes/webhooks.ts; docs/webhooks.md). Every answer is the
// envelope `{success, error, data}`, a missing or invalid key included.

const UNAUTHORIZED = fail(401, "Unauthorized");
const NOT_CONFIGURED = fail(404, "Webhook not configured");
const deliveryId = { id: { description: "The delivery id", example: "0f6a0d1e-3c57-4a7e-9f0e-6c2b0b9b5a77" } };

export const WEBHOOK_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/v1/webhooks",
    tag: "Webhooks",
    summary: "Get the webhook configuration",
    description: "The secret is masked.",
    auth: "key",
    responses: [{ status: 200, description: "The configuration", schema: "WebhookConfigResult" }],
    errors: { shape: "result", list: [UNAUTHORIZED, NOT_CONFIGURED] },
  },
  {
    method: "put",
    path: "/v1/webhooks",
    tag: "Webhooks",
    summary: "Create or update the webhook",
    description: "Creation generates a `whsec_` secret, shown whole in this answer only. An update changes only the fields sent.",
    auth: "key",
    body: {
      schema: "PutWebhookRequest",
      required: true,
      example: { url: "https://shop.example/hooks/payments", events: ["payment.completed", "payment.failed"] },
    },
    responses: [
      { status: 201, description: "Created: the whole secret, shown once", schema: "WebhookConfigResult" },
      { status: 200, description: "Updated: the secret masked", schema: "WebhookConfigResult" },
    ],
    errors: {
      shape: "result",
      list: [
        BAD_JSON,
        NOT_OBJECT,
        fail(400, "url is required"),
        fail(400, "url is not a valid URL"),
        fail(400, "Webhook URL must use HTTPS (http:// is not accepted)"),
        fail(400, "Webhook URL must not contain credentials"),
        fail(400, PRIVATE_TARGET_ERROR),
        fail(400, "events must contain at least one event"),
        fail(400, "isActive must be a boolean"),
        fail(400, "Unknown field: color"),
        UNAUTHORIZED,
        fail(409, "This webhook signs with a dedicated secret; it cannot be switched back to API-key (legacy) signing"),
        TOO_LARGE,
      ],
    },
  },
  {
    method: "post",
    path: "/v1/webhooks",
    tag: "Webhooks",
    summary: "Regenerate the secret",
    description: "The old secret stops signing at once, queued retries included. Needs `Content-Type: application/json`.",
    auth: "key",
    body: { schema: "RegenerateSecretRequest", required: true, example: { action: "regenerate-secret" } },
    responses: [{ status: 200, description: "The new secret, whole", schema: "WebhookSecretResult" }],
    errors: {
      shape: "result",
      list: [fail(400, 'Unknown action; expected {"action": "regenerate-secret"}'), BAD_JSON, UNAUTHORIZED, NOT_CONFIGURED, NOT_JSON],
    },
  },
  {
    method: "delete",
    path: "/v1/webhooks",
    tag: "Webhooks",
    summary: "Delete the webhook",
    description: "Queued deliveries end as `failed`.",
    auth: "key",
    responses: [{ status: 200, description: "Deleted", schema: "DeletedResult" }],
    errors: { shape: "result", list: [UNAUTHORIZED, NOT_CONFIGURED] },
  },
  {
    method: "get",
    path: "/v1/webhooks/deliveries",
    tag: "Extensions",
    summary: "Delivery log",
    description: "The merchant's payment webhook deliveries, newest first.",
    auth: "key",
    extension: true,
    query: deliveriesQuery,
    responses: [{ status: 200, description: "A page of deliveries", schema: "DeliveryPageResult" }],
    errors: {
      shape: "result",
      list: [
        fail(400, "limit must be an integer from 1 to 100"),
        fail(400, "status must be one of pending, success, failed"),
        fail(400, "paymentId must be a payment id"),
        fail(400, "invalid cursor"),
        UNAUTHORIZED,
      ],
    },
  },
  {
    method: "get",
    path: "/v1/webhooks/deliveries/{id}",
    tag: "Extensions",
    summary: "One delivery",
    description: "With the body sent and every attempt.",
    auth: "key",
    extension: true,
    pathParams: deliveryId,
    responses: [{ status: 200, description: "The delivery", schema: "DeliveryDetailResult" }],
    errors: { shape: "result", list: [UNAUTHORIZED, fail(404, "Delivery not found")] },
  },
  {
    method: "post",
    path: "/v1/webhooks/deliveries/{id}/resend",
    tag: "Extensions",
    summary: "Resend a delivery",
    description: "One more attempt, due now (same `webhook-id`).",
    auth: "key",
    extension: true,
    pathParams: deliveryId,
    responses: [{ status: 202, description: "Queued", schema: "DeliveryResult" }],
    errors: {
      shape: "result",
      list: [
        UNAUTHORIZED,
        fail(404, "Delivery not found"),
        fail(409, "An attempt of this delivery is in progress"),
        fail(409, "No active webhook is configured for this delivery"),
      ],
    },
  },
];
