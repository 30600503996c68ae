import { GraphQLError } from "graphql";
import type { Context, ErrorHandler, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { matchedRoutes } from "hono/route";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { DomainError, type ErrorKind } from "../core/errors.js";
import { logger } from "../core/log.js";
import type { AppEnv } from "./context.js";

// The one place where domain errors become HTTP: statuses, the spec's error bodies per route family,
// and GraphQL errors carrying REST's message and status.

export const STATUS: Record<ErrorKind, ContentfulStatusCode> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media: 415,
  rate_limited: 429,
  failed: 500,
  unavailable: 503,
};

/**
 * The error bodies of the spec, by route family:
 * - `plain`: `{error}` (POST /payments, /tokens/*, /oracle/price, /balance, /auth/*);
 * - `coded`: `{error, code}` (GET /v1/payments);
 * - `result`: `{success: false, error, data: null}` (/v1/webhooks*, withdraw, cancel, recover);
 * - `verify`: `{valid: false, verified: false, error}` (GET /payments/verify);
 * - `vault`: `{success: false, error}` (/vault/v1/*: the spec's `{success: true, data}` with its error side).
 */
export type ErrorBody = "plain" | "coded" | "result" | "verify" | "vault";

const CODE_BY_KIND: Record<ErrorKind, string> = {
  invalid: "invalid_request",
  unauthorized: "unauthorized",
  forbidden: "forbidden",
  not_found: "not_found",
  conflict: "conflict",
  too_large: "payload_too_large",
  unsupported_media: "unsupported_media_type",
  rate_limited: "rate_limited",
  failed: "internal_error",
  unavailable: "service_unavailable",
};

export function errorBody(shape: ErrorBody, message: string, code: string): Record<string, unknown> {
  switch (shape) {
    case "plain":
      return { error: message };
    case "coded":
      return { error: message, code };
    case "result":
      return { success: false, error: message, data: null };
    case "verify":
      return { valid: false, verified: false, error: message };
    case "vault":
      return { success: false, error: message };
  }
}

type Family = { shape: ErrorBody; internal: string };
// Keyed by the request's context, not its Request: middleware such as bodyLimit may replace `c.req.raw`.
const families = new WeakMap<Context, Family>();

/**
 * Names the error body of the routes below it, and the message of an unexpected failure
 * (the spec's `Failed to create payment`, `Failed to fetch token price`, ...).
 */
export const errorsAs = (shape: ErrorBody, internal = "Internal server error"): MiddlewareHandler<AppEnv> =>
  // Marked with its family, so middleware in front of the route can answer in the route's body (adoptRouteErrors).
  Object.assign(
    createMiddleware<AppEnv>(async (c, next) => {
      families.set(c, { shape, internal });
      await next();
    }),
    { errorFamily: { shape, internal } satisfies Family },
  );

/**
 * For middleware that runs before the route's own (api/middleware/idempotency.ts): the error body of the route the
 * request matched (its errorsAs, the last one as when they run), so an error thrown now reads like the route's.
 */
export function adoptRouteErrors(c: Context): void {
  let found: Family | undefined;
  for (const r of matchedRoutes(c)) found = (r.handler as { errorFamily?: Family }).errorFamily ?? found;
  if (found && !families.has(c)) families.set(c, found);
}

/** A domain error as the route family's body and status. */
export function domainErrorResponse(c: Context, e: DomainError) {
  const family = families.get(c) ?? { shape: "plain", internal: "Internal server error" };
  const status = STATUS[e.kind];
  const retryAfter = e.details?.retryAfter;
  if (typeof retryAfter === "number") c.header("Retry-After", String(retryAfter));
  // The unread rest of a refused body is still on the socket: close it, so no client reuses it mid-body.
  if (e.kind === "too_large") c.header("Connection", "close");
  return c.json(errorBody(family.shape, e.message, e.code ?? CODE_BY_KIND[e.kind]), status);
}

/** `app.onError`: domain errors mapped; anything else logged (with the request id) and answered 500 without its text. */
export const onError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof DomainError) return domainErrorResponse(c, err);
  const family = families.get(c) ?? { shape: "plain" as const, internal: "Internal server error" };
  if (err instanceof HTTPException && err.status < 500) {
    return c.json(errorBody(family.shape, err.message || "Bad request", "invalid_request"), err.status as ContentfulStatusCode);
  }
  (c.get("log") ?? logger("api")).error({ err, method: c.req.method, path: c.req.path }, "unexpected error");
  return c.json(errorBody(family.shape, family.internal, "internal_error"), 500);
};

/** GraphQL `extensions.code` by status (docs/graphql.md). */
export const GRAPHQL_CODE_BY_STATUS: Record<number, string> = {
  400: "BAD_USER_INPUT",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  429: "RATE_LIMITED",
  500: "INTERNAL_SERVER_ERROR",
  503: "SERVICE_UNAVAILABLE",
};

/** A domain error as a GraphQL field error with REST's message and `extensions: {code, http}`. */
export function toGraphqlError(e: DomainError): GraphQLError {
  const http = STATUS[e.kind];
  return new GraphQLError(e.message, { extensions: { code: e.code ?? GRAPHQL_CODE_BY_STATUS[http], http, ...(e.details ?? {}) } });
}
