import { z } from "zod";
import { unixMs, uuid } from "./schemas-common.js";

// Hand-written zod schemas of the answers of /v1/events (modules/events/feed.ts). The query is the module's own
// (components.ts ROUTE_SCHEMAS EventsQuery).

export const FeedEvent = z.object({
  id: uuid.meta({ description: "The event's id: the `webhook-id` header of every delivery of it" }),
  type: z.string().meta({ description: "The event name (`payment.completed`, `deposit.failed`…), the payload's `event`" }),
  kind: z.enum(["payment", "vault"]),
  createdAt: unixMs,
  payload: z.record(z.string(), z.unknown()).meta({ description: "The webhook body, exactly as its deliveries send and sign it" }),
});
export const EventPage = z.object({
  data: z.array(FeedEvent),
  nextCursor: z.string().meta({ description: "Always given: pass it as `after` to get what comes next (poll with it)" }),
  hasMore: z.boolean().meta({ description: "More events are there right now" }),
});
