import { createMiddleware } from "hono/factory";
import { RateLimited } from "../../core/errors.js";
import { findMerchant } from "../../modules/merchants/authenticate.js";
import type { AppEnv } from "../context.js";
import { keyCaller } from "./api-key.js";
import { clientIp, LIMITS, peekFor, retryAfterSeconds, setRateLimitHeaders, takeFor } from "./rate-limit.js";

/** Every request of an address, a minute. */
export const IP_REQUESTS_PER_MINUTE = LIMITS.requests.limit;
/** Requests of an address whose `x-api-key` matches no active key, a minute: random keys get 429 after this many. */
export const IP_AUTH_FAILURES_PER_MINUTE = LIMITS["auth-failures"].limit;

/**
 * Per-address limits in front of every API route, before any key is looked up: all requests count, and once
 * an address has sent IP_AUTH_FAILURES_PER_MINUTE unknown keys, its requests with a key are refused unread
 * until the budget refills (one every 2 s). 429 `{error: "Too many requests"}` with `Retry-After`.
 */
export const ipLimits = createMiddleware<AppEnv>(async (c, next) => {
  const deps = c.var.deps;
  const address = { ip: clientIp(c) };
  const requests = await takeFor(deps, "requests", address);
  if (!requests.allowed) {
    setRateLimitHeaders(c, IP_REQUESTS_PER_MINUTE, requests);
    throw new RateLimited(retryAfterSeconds(requests));
  }
  if (c.req.header("x-api-key") !== undefined) {
    const failures = await peekFor(deps, "auth-failures", address);
    if (!failures.allowed) throw new RateLimited(retryAfterSeconds(failures));
    // The route's own lookup reuses this one (one caller per request).
    if (!(await findMerchant(deps, keyCaller(c)))) {
      const failed = await takeFor(deps, "auth-failures", address);
      if (!failed.allowed) throw new RateLimited(retryAfterSeconds(failed));
    }
  }
  await next();
});
