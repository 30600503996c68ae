import { createMiddleware } from "hono/factory";
import { RateLimited } from "../../core/errors.js";
import { keyLookupSql, rememberMerchant } from "../../modules/merchants/authenticate.js";
import type { AppEnv } from "../context.js";
import { keyCaller } from "./api-key.js";
import {
  clientIp,
  LIMITS,
  merchantScopeOf,
  rememberTake,
  retryAfterSeconds,
  setRateLimitHeaders,
  takeAndPeekFor,
  takeFor,
} from "./rate-limit.js";

/** Every request of an address, a minute. */
export const IP_REQUESTS_PER_MINUTE = LIMITS.requests.limit;
/** Requests of an address whose `x-api-key` matches no active key, a minute: random keys get 429 after this many. */
export const IP_AUTH_FAILURES_PER_MINUTE = LIMITS["auth-failures"].limit;

/**
 * Per-address limits in front of every API route, read with the request's API key in one statement: all requests count, and once
 * an address has sent IP_AUTH_FAILURES_PER_MINUTE unknown keys, its requests with a key are refused (whether the
 * key is valid or not) until the budget refills (one every 2 s). 429 `{error: "Too many requests"}` with `Retry-After`.
 */
export const ipLimits = createMiddleware<AppEnv>(async (c, next) => {
  const deps = c.var.deps;
  const address = { ip: clientIp(c) };
  const key = c.req.header("x-api-key");
  // One round trip: this request's share of the address's budget, the address's failed-key budget, and the key.
  const lookup = key !== undefined ? keyLookupSql(key) : undefined;
  // The route's merchant budget (POST /payments: 100 a minute) too, once the key has given the merchant.
  const scope = lookup ? merchantScopeOf(c) : undefined;
  const merchantTake = scope && { scope, merchantIdSql: lookup!.merchantIdSql };
  const r = await takeAndPeekFor(deps, "requests", "auth-failures", address, lookup?.sql, merchantTake);
  if (!r.take.allowed) {
    setRateLimitHeaders(c, IP_REQUESTS_PER_MINUTE, r.take);
    throw new RateLimited(retryAfterSeconds(r.take));
  }
  if (lookup) {
    if (!r.peek!.allowed) throw new RateLimited(retryAfterSeconds(r.peek!));
    const merchant = lookup.fromColumn(r.also);
    // The route's own lookup reuses this one (one caller per request).
    rememberMerchant(keyCaller(c), merchant);
    if (scope && r.then) rememberTake(c, scope, r.then);
    if (!merchant) {
      const failed = await takeFor(deps, "auth-failures", address);
      if (!failed.allowed) throw new RateLimited(retryAfterSeconds(failed));
    }
  }
  await next();
});
