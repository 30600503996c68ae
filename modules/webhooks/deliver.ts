import net from "node:net";
import { performance } from "node:perf_hooks";
import { Agent, request, type Dispatcher } from "undici";
import { guardedLookup, hostOf, isLoopbackHost, isPrivateAddress, PrivateAddressError } from "./url-policy.js";

/** Spec: a delivery fails on a connection timeout of 30 seconds. */
export const DELIVERY_TIMEOUT_MS = 30_000;
/** At most this much of a response body is read; the rest is discarded (the connection is dropped). */
export const MAX_RESPONSE_BYTES = 16 * 1024;
/** Characters of the response body kept in the delivery log. */
export const LOGGED_RESPONSE_CHARS = 1000;

export type WebhookAgentOptions = {
  /** Refuse loopback/private addresses on every connection (false only with WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Test-only: trust this CA (e.g. a test receiver's self-signed certificate) instead of the system roots. */
  ca?: string | Buffer;
  timeoutMs?: number;
};

/**
 * The HTTP agent of webhook deliveries: keep-alive connections, connect/headers/body timeouts, and a
 * DNS lookup that refuses private addresses. Redirects are never followed (undici's `request` does not
 * follow them; a 3xx counts as a failed attempt), so a redirect can never lead to a private address.
 */
export function createWebhookAgent(opts: WebhookAgentOptions): Agent {
  const timeout = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  return new Agent({
    connect: {
      timeout,
      ...(opts.ca ? { ca: opts.ca } : {}),
      ...(opts.allowPrivate ? {} : { lookup: guardedLookup }),
    },
    headersTimeout: timeout,
    bodyTimeout: timeout,
    keepAliveTimeout: 10_000,
  });
}

export type AttemptOutcome = {
  ok: boolean;
  httpStatus: number | null;
  /** Response body, truncated to LOGGED_RESPONSE_CHARS. */
  response: string | null;
  /** Why the attempt failed: `timeout: …`, `dns: …`, `tls: …`, `blocked: …`, `connection: …`, or `http <status>`. */
  error: string | null;
  durationMs: number;
};

/** One POST of a signed body. Never throws: every failure becomes an outcome. */
export async function postWebhook(
  input: { url: string; body: string; headers: Record<string, string> },
  opts: { dispatcher: Dispatcher; allowPrivate: boolean; localHttp?: boolean; timeoutMs?: number; maxResponseBytes?: number },
): Promise<AttemptOutcome> {
  const t0 = performance.now();
  const done = (o: Omit<AttemptOutcome, "durationMs">): AttemptOutcome => ({ ...o, durationMs: Math.round(performance.now() - t0) });
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    return done({ ok: false, httpStatus: null, response: null, error: "invalid url" });
  }
  // Local mode (url-policy.ts webhookUrlPolicy) also sends plain http:// to this machine.
  const localHttp = opts.localHttp === true && url.protocol === "http:" && isLoopbackHost(url.hostname);
  if (url.protocol !== "https:" && !localHttp)
    return done({ ok: false, httpStatus: null, response: null, error: "blocked: webhook URLs must use HTTPS" });
  // IP literals never go through DNS, so the connection-time lookup cannot check them: check here.
  const host = hostOf(url);
  if (!opts.allowPrivate && net.isIP(host) && isPrivateAddress(host))
    return done({ ok: false, httpStatus: null, response: null, error: `blocked: ${new PrivateAddressError(host, host).message}` });

  const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, { method: "POST", body: input.body, headers: input.headers, dispatcher: opts.dispatcher, signal });
  } catch (e) {
    return done({ ok: false, httpStatus: null, response: null, error: describeError(e, timeoutMs) });
  }
  const { text, error: readError } = await readCapped(res.body, opts.maxResponseBytes ?? MAX_RESPONSE_BYTES);
  const ok = res.statusCode >= 200 && res.statusCode <= 299;
  return done({
    ok,
    httpStatus: res.statusCode,
    response: text,
    error: ok ? null : `http ${res.statusCode}${readError ? ` (${readError})` : ""}`,
  });
}

async function readCapped(body: Dispatcher.ResponseData["body"], cap: number): Promise<{ text: string | null; error?: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      const take = buf.subarray(0, cap - size);
      chunks.push(take);
      size += take.length;
      if (size >= cap) {
        truncated = true;
        break; // leaving the loop destroys the body: the rest is never read
      }
    }
  } catch (e) {
    body.destroy();
    return { text: truncateText(Buffer.concat(chunks).toString("utf8"), false), error: describeError(e, 0) };
  }
  return { text: truncateText(Buffer.concat(chunks).toString("utf8"), truncated) };
}

function truncateText(s: string, truncated: boolean): string | null {
  if (!s && !truncated) return null;
  return s.length > LOGGED_RESPONSE_CHARS || truncated ? `${s.slice(0, LOGGED_RESPONSE_CHARS)}…[truncated]` : s;
}

const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
  "ESOCKETTIMEDOUT",
]);
const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME", "ENODATA", "ESERVFAIL"]);

/** A short, classified reason for the delivery log. */
export function describeError(e: unknown, timeoutMs: number): string {
  const err = e as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err?.code ?? err?.cause?.code ?? "";
  const msg = String(err?.message ?? e)
    .split("\n")[0]!
    .slice(0, 300);
  if (err?.name === "TimeoutError" || err?.name === "AbortError" || TIMEOUT_CODES.has(code))
    return `timeout: no complete response within ${timeoutMs} ms`;
  if (code === "EWEBHOOK_PRIVATE_ADDRESS") return `blocked: ${msg}`;
  if (DNS_CODES.has(code)) return `dns: ${code} ${msg}`;
  if (/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code) || /certificate|tls|ssl/i.test(msg))
    return `tls: ${code ? `${code} ` : ""}${msg}`;
  return `connection: ${code ? `${code} ` : ""}${msg}`;
}
