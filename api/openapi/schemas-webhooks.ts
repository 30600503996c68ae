import { z } from "zod";
import { DELIVERY_STATUSES } from "../../modules/webhooks/index.js";
import { PAYMENT_EVENTS } from "../../modules/webhooks/index.js";
import { unixMs, uuid } from "./schemas-common.js";

// Hand-written zod schemas of the answers of /v1/webhooks (modules/webhooks/config.ts, deliveries.ts). The request
// bodies and the delivery log's query are the modules' own (components.ts ROUTE_SCHEMAS).

export const WebhookConfig = z.object({
  id: uuid,
  url: z.string(),
  events: z.array(z.enum(PAYMENT_EVENTS)),
  isActive: z.boolean(),
  secret: z.string().nullable().meta({
    description: "`whsec_…`: whole on creation and regeneration, masked (`whsec_********abcd`) otherwise; null for a legacy webhook",
  }),
  signing: z.enum(["secret", "api-key"]),
  legacyApiKeyPrefix: z.string().nullable(),
  createdAt: unixMs,
  updatedAt: unixMs,
});
export const WebhookSecret = z.object({ secret: z.string().meta({ examples: ["whsec_q0Xb3Jd3m0bV8w8oZ2m1c1nq5m3kK1Yw8Vd0mJm1y2E="] }) });
export const Deleted = z.object({ deleted: z.literal(true) });

export const Delivery = z.object({
  id: uuid,
  kind: z.enum(["payment", "vault"]),
  event: z.string(),
  paymentId: uuid.nullable(),
  depositId: uuid.nullable(),
  status: z.enum(DELIVERY_STATUSES),
  httpStatus: z.number().int().nullable(),
  attempts: z.number().int(),
  maxAttempts: z.number().int(),
  response: z.string().nullable().meta({ description: "Last response body, truncated to 1000 characters" }),
  error: z.string().nullable(),
  createdAt: unixMs,
  lastAttemptAt: unixMs.nullable(),
  nextAttemptAt: unixMs.nullable(),
  deliveredAt: unixMs.nullable(),
});
export const DeliveryPage = z.object({ deliveries: z.array(Delivery), nextCursor: z.string().nullable(), hasMore: z.boolean() });
export const DeliveryDetail = Delivery.extend({
  payload: z.unknown().meta({ description: "The body sent" }),
  attemptLog: z.array(
    z.object({
      attempt: z.number().int(),
      url: z.string(),
      httpStatus: z.number().int().nullable(),
      response: z.string().nullable(),
      error: z.string().nullable(),
      durationMs: z.number().int().nullable(),
      at: unixMs,
    }),
  ),
});
