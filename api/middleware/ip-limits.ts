import { createMiddleware } from "hono/factory";
import { batcher, QUEUE_FULL, type Batcher } from "../../core/batcher.js";
import type { AppDeps } from "../../core/deps.js";
import { RateLimited, Unavailable } from "../../core/errors.js";
import { isSplittable, retryConflicts } from "../../db/statement-failures.js";
import { KEY_LOOKUP_BATCH, keyHashOf, keyLookupSql, rememberMerchant } from "../../modules/merchants/index.js";
import type { AppEnv } from "../context.js";
import { keyCaller } from "./api-key.js";
import {
  clientIp,
  ipBucket,
  LIMITS,
  merchantScopeOf,
  rememberTake,
  retryAfterSeconds,
  setRateLimitHeaders,
  takeAndPeekFor,
  takeAndPeekManyFor,
  takeFor,
  type Scope,
} from "./rate-limit.js";
import type { Take } from "./rate-limit-store.js";

/** Every request of an address, a minute. */
export const IP_REQUESTS_PER_MINUTE = LIMITS.requests.limit;
/** Requests of an address whose `x-api-key` matches no active key, a minute: random keys get 429 after this many. */
export const IP_AUTH_FAILURES_PER_MINUTE = LIMITS["auth-failures"].limit;

/** What ipLimits' statement does for one request: its address, its `x-api-key` and the merchant budget of its route. */
type LimitsRequest = { ip: string; key?: string; scope?: Scope };
type LimitsAnswer = { take: Take; peek: Take | undefined; also: unknown; then: Take | undefined };
/** What the statement reads of the deps: the database and the clock, nothing else. */
type LimitsDeps = Pick<AppDeps, "db" | "now">;

/** One request alone, in the statement of its own it always had (a batch of one; a failed batch's requests). */
function limitsAlone(deps: LimitsDeps, r: LimitsRequest): Promise<LimitsAnswer> {
  const lookup = r.key !== undefined ? keyLookupSql(r.key) : undefined;
  const merchantTake = r.scope && lookup && { scope: r.scope, merchantIdSql: lookup.merchantIdSql };
  return takeAndPeekFor(deps, "requests", "auth-failures", { ip: r.ip }, lookup?.sql, merchantTake);
}

/** Largest batch of requests' limits in one statement. */
export const LIMITS_BATCH_MAX = 64;

// Per database and clock (tests run replicas with clocks of their own): the requests of one batch share both.
const batchers = new WeakMap<LimitsDeps["db"], WeakMap<LimitsDeps["now"], Batcher<LimitsRequest, LimitsAnswer>>>();

/**
 * ipLimits' statement, batched (core/batcher.ts): the requests that arrive while a batch runs are limited and their
 * keys looked up in one statement (rate-limit-many.ts takeMany), answered as if taken one after the other. Two batches
 * may run at once (one slow statement does not hold up every request), never two with the same address or key.
 */
export function requestLimitsBatcher(deps: LimitsDeps): Batcher<LimitsRequest, LimitsAnswer> {
  const { db, now } = deps;
  let byClock = batchers.get(db);
  if (!byClock) batchers.set(db, (byClock = new WeakMap()));
  let b = byClock.get(now);
  if (!b) {
    const own = { db, now };
    b = batcher<LimitsRequest, LimitsAnswer>({
      name: "limits",
      run: (requests) =>
        takeAndPeekManyFor(
          own,
          "requests",
          "auth-failures",
          KEY_LOOKUP_BATCH,
          requests.map((r) => ({
            who: { ip: r.ip },
            lookup: r.key !== undefined ? keyHashOf(r.key) : null,
            merchantScope: r.key !== undefined ? r.scope : undefined,
          })),
        ),
      runOne: (r) => retryConflicts(() => limitsAlone(own, r)),
      splittable: isSplittable,
      // Each alone is one atomic statement: no order to keep among them.
      split: "each",
      full: () => new Unavailable(QUEUE_FULL),
      maxSize: LIMITS_BATCH_MAX,
      maxInFlight: 2,
      keys: (r) => (r.key !== undefined ? [ipBucket(r.ip), `key ${r.key}`] : [ipBucket(r.ip)]),
    });
    byClock.set(now, b);
  }
  return b;
}

/**
 * Per-address limits in front of every API route, read with the request's API key in one statement: all requests count, and once
 * an address has sent IP_AUTH_FAILURES_PER_MINUTE unknown keys, its requests with a key are refused (whether the
 * key is valid or not) until the budget refills (one every 2 s). 429 `{error: "Too many requests"}` with `Retry-After`.
 * The statement is shared with the requests arriving at the same time (requestLimitsBatcher).
 */
export const ipLimits = createMiddleware<AppEnv>(async (c, next) => {
  const deps = c.var.deps;
  const address = { ip: clientIp(c) };
  const key = c.req.header("x-api-key");
  // One round trip: this request's share of the address's budget, the address's failed-key budget, the key, and
  // the route's merchant budget (POST /payments: 100 a minute) once the key has given the merchant.
  const scope = key !== undefined ? merchantScopeOf(c) : undefined;
  const r = await requestLimitsBatcher(deps)({ ip: address.ip, key, scope });
  if (!r.take.allowed) {
    setRateLimitHeaders(c, IP_REQUESTS_PER_MINUTE, r.take);
    throw new RateLimited(retryAfterSeconds(r.take));
  }
  if (key !== undefined) {
    if (!r.peek!.allowed) throw new RateLimited(retryAfterSeconds(r.peek!));
    const merchant = KEY_LOOKUP_BATCH.fromColumn(r.also);
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
