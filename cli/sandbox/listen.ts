import type { EventPage } from "../../modules/events/index.js";
import { ApiError, callApi, type Target } from "./env.js";
import { eventFilter, forwardEvent } from "./forward.js";
import type { SigningSetup } from "./keys.js";

// `listen --forward-to <url>`: follows the merchant's event feed (GET /v1/events, from now on, or from the oldest
// event kept with --from-start) and POSTs each event to a local server, signed like a real delivery, in feed order,
// one at a time. What a receiver answers changes nothing: the cursor moves on (like `stripe listen`); `resend` sends
// one again. The feed, not the webhook dispatcher, is the source: events come through whatever the merchant's webhook
// configuration, and while the dispatcher is down. One JSON line per event on stdout.

export type ListenOptions = {
  forwardTo: string;
  events?: string;
  fromStart: boolean;
  intervalMs: number;
  signing: SigningSetup;
  print: (line: Record<string, unknown>) => void;
  signal: AbortSignal;
};

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

const page = (t: Target, after: string | undefined) =>
  callApi<EventPage>(t, "GET", `/v1/events?limit=100${after === undefined ? "" : `&after=${encodeURIComponent(after)}`}`);

/** Runs until `signal` aborts; throws when the key is refused (401) or the forward URL is not one. */
export async function listen(t: Target, o: ListenOptions): Promise<void> {
  new URL(o.forwardTo); // a bad URL fails now, not on the first event
  const wanted = eventFilter(o.events);
  let cursor = o.fromStart ? undefined : (await page(t, "now")).nextCursor;
  o.print({
    listening: true,
    forwardTo: o.forwardTo,
    api: t.apiUrl,
    from: o.fromStart ? "start" : "now",
    signing: o.signing.sources,
    ...(o.signing.sessionSecret ? { sessionSecret: o.signing.sessionSecret } : {}),
    ...(o.signing.warning ? { warning: o.signing.warning } : {}),
  });
  while (!o.signal.aborted) {
    let p: EventPage;
    try {
      p = await page(t, cursor);
    } catch (e) {
      if (e instanceof ApiError && (e.status === 401 || e.status === 400)) throw e;
      o.print({ error: `feed unavailable: ${(e as Error).message}` });
      await sleep(o.intervalMs, o.signal);
      continue;
    }
    for (const event of p.data) {
      if (o.signal.aborted) return;
      if (!wanted(event.type)) continue;
      o.print({ forwarded: await forwardEvent(o.forwardTo, event, o.signing.keys[event.kind]) });
    }
    cursor = p.nextCursor;
    if (!p.hasMore) await sleep(o.intervalMs, o.signal);
  }
}
