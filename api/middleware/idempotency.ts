import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { matchedRoutes } from "hono/route";
import { bodyFingerprint } from "../../modules/idempotency/index.js";
import { checkIdempotencyKey, IDEMPOTENCY_HEADER, REPLAYED_HEADER, type KeyUse } from "../../modules/idempotency/index.js";
import {
  abandonIdempotencyKey,
  claimIdempotencyKey,
  completeIdempotencyKey,
  keepIdempotencyKey,
  keyScopeOf,
  releaseIdempotencyKey,
  type Claim,
  type Claimed,
  type KeyedRequest,
} from "../../modules/idempotency/index.js";
import type { AppDeps } from "../../core/deps.js";
import { logger } from "../../core/log.js";
import type { AppEnv } from "../context.js";
import { adoptRouteErrors } from "../errors.js";
import { keyCaller } from "./api-key.js";
import { rawBody } from "./input.js";

// `Idempotency-Key` on the API's POSTs (docs/payments.md "Idempotency keys"). In front of every /api route, after the per-address
// limits (which look the API key up): a POST whose API key is live and that carries the header is claimed under
// (API key, key) before the route runs; its final response (status, body, own headers) is stored for 24 hours and sent
// again, with `Idempotent-Replayed: true`, to a retry with the same key and the same body. Requests without the header,
// or without a valid API key (the route answers 401 as always), pass through untouched.

/** POSTs the header does not apply to: GraphQL takes the key as a mutation argument; the rest take no API key. */
const NOT_KEYED = [/^\/graphql\/?$/, /^\/auth\//, /^\/payments\/[^/]+\/bridge\//];

/**
 * Whether a response is the operation's answer, to be stored: 2xx and 4xx, except those that say the operation did not
 * run and may well run on a retry: 401 (the key was revoked meanwhile), 408, 409 (a conflict of the moment: an attempt
 * in progress, funds not counted yet), 415 (the content type is not part of the fingerprint) and 429.
 */
export const isFinalStatus = (status: number) =>
  (status >= 200 && status < 300) || (status >= 400 && status < 500 && ![401, 408, 409, 415, 429].includes(status));

/**
 * Headers of the exchange, not of the answer: never stored (a replay has its own). Everything else the route set is
 * (content type, `RateLimit`, `Location`, `Retry-After`, ...).
 */
const NOT_STORED = new Set(["date", "content-length", "transfer-encoding", "connection", "keep-alive", "set-cookie", "x-request-id"]);

/** The request's path under /api, as sent (still percent-encoded: a decoded `%00` is no text Postgres stores). */
const apiPath = (c: Context<AppEnv>) => new URL(c.req.url).pathname.replace(/^\/api(?=\/)/, "");

// The use a request runs under, by request: POST /payments records it on the payment (modules/payments/create.ts).
const uses = new WeakMap<Request, KeyUse>();

/** The key use of a request that runs under an Idempotency-Key (undefined without one). */
export const idempotencyUseOf = (c: Context): KeyUse | undefined => uses.get(c.req.raw);

/** Settles a claimed key after the route answered `status`: stored, forgotten (nothing ran) or left to a retry (unknown). */
export async function settleClaim(
  deps: AppDeps,
  claim: Claimed,
  status: number,
  response: () => Promise<{ body: string; headers: [string, string][] }>,
): Promise<void> {
  if (isFinalStatus(status)) await completeIdempotencyKey(deps, claim, { status, ...(await response()) });
  else if (status >= 500) await abandonIdempotencyKey(deps, claim);
  else await releaseIdempotencyKey(deps, claim);
}

export const idempotency = createMiddleware<AppEnv>(async (c, next) => {
  const key = c.req.header(IDEMPOTENCY_HEADER);
  if (c.req.method !== "POST" || key === undefined) return next();
  const path = apiPath(c);
  if (NOT_KEYED.some((re) => re.test(path)) || !matchedRoutes(c).some((r) => r.method === "POST")) return next();
  const deps = c.var.deps;
  const scope = await keyScopeOf(deps, keyCaller(c));
  if (!scope) return next();

  let req: KeyedRequest;
  let claim: Claim;
  try {
    const checked = checkIdempotencyKey(key);
    // The body's size limit (413), as the route would; its parsing stays the route's.
    const hash = bodyFingerprint(await rawBody(c));
    req = { ...scope, key: checked, method: "POST", path, hash, subject: "body" };
    claim = await claimIdempotencyKey(deps, req);
  } catch (e) {
    // Thrown before the route's middleware ran: answered in the route's error body all the same.
    adoptRouteErrors(c);
    throw e;
  }
  if (claim.kind === "replay") {
    const { status, body, headers } = claim.response;
    // One value per name: a Headers object joins repeated ones (set-cookie, the exception, is never stored).
    return c.body(body, status as ContentfulStatusCode, { ...Object.fromEntries(headers), [REPLAYED_HEADER]: "true" });
  }

  uses.set(c.req.raw, claim.use);
  const stop = keepIdempotencyKey(deps, claim);
  try {
    await next();
  } catch (e) {
    // The app's error handler answers every error; anything still thrown leaves the operation's outcome unknown.
    stop();
    await abandonIdempotencyKey(deps, claim).catch(() => {});
    throw e;
  }
  stop();
  const res = c.res;
  try {
    await settleClaim(deps, claim, res.status, async () => {
      const headers: [string, string][] = [];
      res.headers.forEach((value, name) => {
        if (!NOT_STORED.has(name)) headers.push([name, value]);
      });
      return { body: await res.clone().text(), headers };
    });
  } catch (err) {
    // The operation has run and its response stands; the key stays `processing` until its timeout.
    (c.get("log") ?? logger("api")).error({ err, key: req.key, path }, "idempotency key not stored");
  }
});
