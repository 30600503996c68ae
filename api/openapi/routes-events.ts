import { AFTER_MESSAGE, EVENT_NOT_FOUND, eventsQuery } from "../../modules/events/index.js";
import { fail, type Operation } from "./operation.js";

// The event feed (api/routes/events.ts; docs/payments.md "Event feed"). API key; GET /v1/payments's `{error, code}` bodies.

const UNAUTHORIZED = fail(401, "Unauthorized", { code: "unauthorized" });

export const EVENT_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/v1/events",
    tag: "Extensions",
    summary: "The event feed",
    description:
      "Every payment and Vault event of the merchant, oldest first, whatever the webhook configuration and however its deliveries went: the same `payload` as the webhook and its `webhook-id` as `id`. Poll with `after = nextCursor` (`nextCursor` is always given; `hasMore` says more is there now); `after=now` starts at the end. Vault events are seen with their vault's key only. The cursor is opaque, a position in the merchant's own feed. Kept `EVENT_FEED_RETENTION_DAYS` (30) days from when the event was written.",
    auth: "key",
    extension: true,
    query: eventsQuery,
    responses: [{ status: 200, description: "A page of events", schema: "EventPage" }],
    errors: {
      shape: "coded",
      list: [
        fail(400, "limit must be an integer between 1 and 100", { code: "invalid_query" }),
        fail(400, AFTER_MESSAGE, { code: "invalid_query" }),
        UNAUTHORIZED,
        fail(500, "Internal server error", { code: "internal_error" }),
      ],
    },
  },
  {
    method: "get",
    path: "/v1/events/{id}",
    tag: "Extensions",
    summary: "One event",
    description: "An event of the feed by its id (the `webhook-id` of its deliveries).",
    auth: "key",
    extension: true,
    pathParams: { id: { description: "The event id", example: "0f6a0d1e-3c57-4a7e-9f0e-6c2b0b9b5a77" } },
    responses: [{ status: 200, description: "The event", schema: "FeedEvent" }],
    errors: { shape: "coded", list: [UNAUTHORIZED, fail(404, EVENT_NOT_FOUND, { code: "not_found" })] },
  },
];
