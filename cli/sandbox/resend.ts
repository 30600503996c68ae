import type { FeedEvent } from "../../modules/events/index.js";
import { ApiError, callApi, type Target } from "./env.js";
import { forwardEvent, type Forwarded } from "./forward.js";
import type { SigningSetup } from "./keys.js";

// `resend <eventId>`: one event again.
// - with `--forward-to <url>`: read from the feed (GET /v1/events/{id}) and POSTed to that URL, signed as `listen`
//   signs (a fresh `webhook-timestamp`, the same `webhook-id`: a receiver that deduplicates on it sees a repeat);
// - without: the service redelivers it to the merchant's real webhook (POST /v1/webhooks/deliveries/{id}/resend: an
//   event's delivery has the event's id), for a payment event that was delivered (subscribed) at the time.

export type Resent = { via: "forward"; forwarded: Forwarded } | { via: "webhook"; delivery: unknown };

export async function resendEvent(t: Target, eventId: string, o: { forwardTo?: string; signing?: SigningSetup }): Promise<Resent> {
  if (o.forwardTo) {
    new URL(o.forwardTo);
    const event = await callApi<FeedEvent>(t, "GET", `/v1/events/${encodeURIComponent(eventId)}`);
    return { via: "forward", forwarded: await forwardEvent(o.forwardTo, event, o.signing!.keys[event.kind]) };
  }
  try {
    const r = await callApi<{ data: unknown }>(t, "POST", `/v1/webhooks/deliveries/${encodeURIComponent(eventId)}/resend`);
    return { via: "webhook", delivery: r.data };
  } catch (e) {
    if (e instanceof ApiError && e.status === 404)
      throw new Error(
        `event ${eventId} has no webhook delivery (a Vault event, or no webhook subscribed to it when it happened): ` +
          "pass --forward-to <url> to send it from the feed",
      );
    throw e;
  }
}
