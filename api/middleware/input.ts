import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { Invalid, TooLarge, UnsupportedMedia } from "../../core/errors.js";

// The one reader of request input for REST routes: bodies and query strings pass through here, so size,
// encoding, nesting and NUL characters are refused once, as the route family's 4xx, before any module or
// Postgres sees them (Postgres refuses NUL in text, which would otherwise surface as a 500).

/** Largest REST request body, in bytes (413 above). The largest legitimate body (a webhook or Vault config) is a few kB. */
export const MAX_BODY_BYTES = 64 * 1024;
/** Deepest JSON nesting accepted: no operation reads more than three levels. */
export const MAX_JSON_DEPTH = 32;

const NUL = "\u0000";

/**
 * Reads at most `max` bytes of the body: a declared or streamed size above it is refused without reading on.
 * Under Node the body is read from the socket's stream itself (`c.env.incoming`, @hono/node-server): the web
 * `Request` body would wrap it in a web stream first, a large share of a small request's cost.
 */
async function readCapped(c: Context, max: number): Promise<Uint8Array> {
  const req = c.req.raw;
  const tooLarge = () => new TooLarge(`Request body too large (limit ${max} bytes)`);
  const declared = req.headers.get("content-length");
  if (declared !== null && !req.headers.has("transfer-encoding") && Number(declared) > max) throw tooLarge();
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming && !incoming.readableDidRead) return readIncoming(c, incoming, max, tooLarge);
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/** Node's own stream of the body. Too large: reading stops and the connection closes after the 413 (not reset before it). */
function readIncoming(c: Context, incoming: IncomingMessage, max: number, tooLarge: () => Error): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      incoming.off("data", onData).off("end", onEnd).off("error", reject);
      incoming.pause();
      c.header("Connection", "close");
      reject(tooLarge());
    };
    const onEnd = () => resolve(Buffer.concat(chunks, size));
    incoming.on("data", onData).once("end", onEnd).once("error", reject);
  });
}

// Bodies read before the route (api/middleware/idempotency.ts hashes them), by request context: the route reads the same bytes.
const readAhead = new WeakMap<Context, Promise<Uint8Array>>();

/** The request's body bytes, at most MAX_BODY_BYTES (413 above); read once per request, whoever asks first. */
export function rawBody(c: Context): Promise<Uint8Array> {
  let bytes = readAhead.get(c);
  if (!bytes) readAhead.set(c, (bytes = readCapped(c, MAX_BODY_BYTES)));
  return bytes;
}

/** Why a parsed JSON value may not go on (too deep, or a NUL in a key or a string), or null. Iterative: depth cannot overflow the stack. */
export function jsonProblem(value: unknown, maxDepth = MAX_JSON_DEPTH): string | null {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v === "string") {
      if (v.includes(NUL)) return "Text must not contain NUL characters";
    } else if (typeof v === "object" && v !== null) {
      if (depth > maxDepth) return `JSON nested deeper than ${maxDepth} levels`;
      for (const [k, child] of Object.entries(v)) {
        if (k.includes(NUL)) return "Text must not contain NUL characters";
        stack.push([child, depth + 1]);
      }
    }
  }
  return null;
}

export type JsonBodyOptions = {
  /** The message of any unreadable body (the spec's `Invalid form data` on POST /payments); else each problem's own. */
  invalid?: string;
  /**
   * When `Content-Type` must be `application/json` (415 otherwise): `"body"` (the default) when there is a body;
   * `"always"`, checked before anything is read, even with no body (cookie routes: an HTML form can post
   * text/plain across sites, never JSON); `"never"`, any body is parsed (POST /payments always has).
   */
  contentType?: "body" | "always" | "never";
};

/**
 * A request's JSON body: no body is `undefined`; at most MAX_BODY_BYTES (413), valid UTF-8 and JSON (400
 * `Invalid JSON body`), `application/json` (415), no deeper than MAX_JSON_DEPTH and no NUL character (400).
 */
export async function jsonBody(c: Context, opts: JsonBodyOptions = {}): Promise<unknown> {
  const check = opts.contentType ?? "body";
  const isJson = () => /^application\/json\b/i.test(c.req.header("content-type") ?? "");
  if (check === "always" && !isJson()) throw new UnsupportedMedia("Content-Type must be application/json");
  const bytes = await rawBody(c);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new Invalid(opts.invalid ?? "Invalid JSON body");
  }
  if (text.trim() === "") return undefined;
  if (check === "body" && !isJson()) throw new UnsupportedMedia("Content-Type must be application/json");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Invalid(opts.invalid ?? "Invalid JSON body");
  }
  const problem = jsonProblem(value);
  if (problem) throw new Invalid(opts.invalid ?? problem);
  return value;
}

/**
 * The query string's parameters (the first of a repeated name, as Hono reads them). A NUL in a name or value
 * is 400 (`invalid_query` where the route family has codes).
 */
export function queryOf(c: Context): Record<string, string> {
  const q = c.req.query();
  for (const [k, v] of Object.entries(q))
    if (k.includes(NUL) || v.includes(NUL)) throw new Invalid("Query parameters must not contain NUL characters", "invalid_query");
  return q;
}
