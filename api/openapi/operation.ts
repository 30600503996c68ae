import type { z } from "zod";
import type { ErrorBody } from "../errors.js";
import type { ComponentName } from "./components.js";

/**
 * Who may call an operation: `key` = `x-api-key` (the spec's K); `public` (P); `key-or-session` (K/S: the key or the
 * dashboard's `cp_session` cookie); `optional-key` (GraphQL: the fields that need a key check it); `metrics`
 * (a bearer token, METRICS_TOKEN).
 */
export type Auth = "key" | "public" | "key-or-session" | "optional-key" | "metrics";

/** A documented failure: status and exact message, in the operation's error body unless `shape` says otherwise. */
export type Failure = { status: number; message: string; shape?: ErrorBody; code?: string };

export type Success = {
  status: number;
  description: string;
  /** A component (JSON), or raw content of another type (HTML, text, JS, CSS). */
  schema?: ComponentName;
  contentType?: string;
  example?: unknown;
};

/** One operation of the HTTP API, as api/openapi/document.ts turns it into OpenAPI. */
export type Operation = {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** Relative to the server (`{base_url}`, ending in /api), with `{param}` placeholders. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  /** Beyond the spec's endpoint table: `x-extension: true`. */
  extension?: boolean;
  pathParams?: Record<string, { description: string; example?: string }>;
  /** Each property is one query parameter (its own JSON Schema; required unless optional). */
  query?: z.ZodObject;
  body?: { schema: ComponentName; required?: boolean; example?: unknown };
  responses: Success[];
  /** The route family's error body (api/errors.ts) and its documented failures. */
  errors: { shape: ErrorBody; list: Failure[] };
  /** The route's own rate limit, in words (spec "Rate limits"). */
  rateLimit?: string;
  /** A path outside /api (GET /metrics): served from the API's origin root. */
  atRoot?: boolean;
  /** False for a route outside the /api sub-app, which the per-address flood guard (api/middleware/ip-limits.ts) does not see. */
  ipLimited?: false;
};

/** A failure in the operation's body. */
export const fail = (status: number, message: string, extra: Omit<Failure, "status" | "message"> = {}): Failure => ({
  status,
  message,
  ...extra,
});

export const UNAUTHORIZED = fail(401, "Unauthorized");
export const TOO_MANY = fail(429, "Too many requests");
export const TOO_LARGE = fail(413, "Request body too large (limit 65536 bytes)");
export const NOT_JSON = fail(415, "Content-Type must be application/json");
export const BAD_JSON = fail(400, "Invalid JSON body");
export const NOT_OBJECT = fail(400, "Body must be a JSON object");
