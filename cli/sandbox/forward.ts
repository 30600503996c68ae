import type { FeedEvent } from "../../modules/events/index.js";
import { DELIVERY_TIMEOUT_MS } from "../../modules/webhooks/index.js";
import { webhookHeaders } from "../../modules/webhooks/index.js";

// One event of the feed POSTed to a local server, signed as the dispatcher signs a real delivery: the same body
// bytes (the payload as the feed gives it, which is the delivery's body), `webhook-id` = the event id, the send time
// as `webhook-timestamp`, Standard Webhooks `webhook-signature` and the spec's `X-Signature` (payment events) or
// `X-Webhook-Signature` (Vault events), by modules/webhooks/sign.ts itself. Unlike the dispatcher, plain http and
// loopback targets are fine: this is the integrator's own machine.

export type Forwarded = {
  id: string;
  type: string;
  /** The receiver's HTTP status; null when there was no answer (see `error`). */
  status: number | null;
  error?: string;
  ms: number;
};

export async function forwardEvent(url: string, event: FeedEvent, signingKey: string | null, now = Date.now()): Promise<Forwarded> {
  const body = JSON.stringify(event.payload);
  const headers = webhookHeaders({ scheme: event.kind, id: event.id, timestampSeconds: Math.floor(now / 1000), rawBody: body, signingKey });
  const t0 = Date.now();
  try {
    const res = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS) });
    await res.arrayBuffer().catch(() => {});
    return { id: event.id, type: event.type, status: res.status, ms: Date.now() - t0 };
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    return { id: event.id, type: event.type, status: null, error: err.cause?.code ?? err.message, ms: Date.now() - t0 };
  }
}

/** `--events`: exact names, or a prefix ending in `*` (`deposit.*`). Empty: every event. */
export function eventFilter(list: string | undefined): (type: string) => boolean {
  const names = (list ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!names.length) return () => true;
  return (type) => names.some((n) => (n.endsWith("*") ? type.startsWith(n.slice(0, -1)) : type === n));
}
