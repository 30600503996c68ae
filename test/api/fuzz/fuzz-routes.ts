import fc from "fast-check";
import { zeroAddress } from "viem";
import type { FuzzRequest } from "./fuzz-check.js";
import { enumerateBodies, hugeBody, invalidBody, maybeValidBody, type BodySpec, type GeneratedBody } from "./fuzz-bodies.js";
import {
  ADDRESS_LIKE,
  badChecksum,
  badString,
  paymentSpec,
  randomAddress,
  toleranceSpec,
  vaultCreateSpec,
  vaultPatchSpec,
  vaultTokenSpec,
  vaultUserSpec,
  vaultWebhookSpec,
  webhookSpec,
  type FuzzContext,
} from "./fuzz-specs.js";
import {
  anyJson,
  badApiKey,
  badCookie,
  forgedCursor,
  HOSTILE_DATES,
  HOSTILE_STRINGS,
  hostileId,
  hostileQueryValue,
  hostileString,
  notString,
  NUMBERISH,
  pct,
  pool,
  queryPool,
  queryString,
  union,
  type Pool,
  type QueryPart,
  type QueryValue,
} from "./fuzz-values.js";

// Every route of api/app.ts, api/routes/*.ts and web/pay/page.ts as fast-check arbitraries of requests (the POSTs also
// with an Idempotency-Key now and then: api-fuzz.test.ts adds it).
// Phase "reject": built to be refused (writing routes) or read-only (GET): nothing may be written.
// Phase "maybe": a valid body with one hostile value of the right type: may be accepted, and may then write.

/** `fixed`: every curated value, one request each; `count` random requests drawn from `arb` on top. */
export type RouteGen = { route: string; phase: "reject" | "maybe"; count: number; arb: fc.Arbitrary<FuzzRequest>; fixed?: FuzzRequest[] };

type Headers = Record<string, string>;
/** Mostly the valid key, sometimes none, another key or a key that never is one. */
function keyHeaders(ctx: FuzzContext, keys = [ctx.key], validWeight = 8): fc.Arbitrary<Headers> {
  return fc.oneof(
    { weight: validWeight, arbitrary: fc.constantFrom(...keys).map((k) => ({ "x-api-key": k })) },
    { weight: 1, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: badApiKey(ctx.key).map((k) => ({ "x-api-key": k })) },
  );
}
/** Never a valid key of a merchant with anything to delete. */
const noAuth = (ctx: FuzzContext, other: string[] = []): fc.Arbitrary<Headers> =>
  fc.oneof(
    fc.constant({}),
    badApiKey(ctx.key).map((k) => ({ "x-api-key": k })),
    ...(other.length ? [fc.constantFrom(...other).map((k) => ({ "x-api-key": k }))] : []),
  );

function withBody(route: string, method: string, path: string, headers: Headers, b: GeneratedBody, mustReject: boolean): FuzzRequest {
  const h = { ...headers };
  if (b.contentType !== null) h["content-type"] = b.contentType;
  return { route, method, path, headers: h, body: b.body, note: b.note, mustReject };
}

/** A body route: every curated invalid value once (with `fixedHeaders`), random refused bodies, a few 2 MB ones. */
function bodyRoute(
  route: string,
  path: string,
  spec: BodySpec,
  counts: { invalid: number; huge?: number },
  headers: fc.Arbitrary<Headers>,
  fixedHeaders: Headers,
  hugeField = Object.keys(spec.invalid)[0]!,
): RouteGen[] {
  const [method] = route.split(" ") as [string];
  const gens: RouteGen[] = [
    {
      route,
      phase: "reject",
      count: counts.invalid,
      arb: fc.tuple(headers, invalidBody(spec)).map(([h, b]) => withBody(route, method, path, h, b, true)),
      fixed: enumerateBodies(spec, "invalid").map((b) => withBody(route, method, path, fixedHeaders, b, true)),
    },
  ];
  if (counts.huge)
    gens.push({
      route,
      phase: "reject",
      count: counts.huge,
      arb: fc.tuple(headers, hugeBody(hugeField)).map(([h, b]) => withBody(route, method, path, h, b, true)),
    });
  return gens;
}

/** Query parameters: a few of the route's own (semi-valid or hostile values), repeated ones, and foreign names. */
function queryArb(params: Record<string, Pool<QueryValue>>): fc.Arbitrary<QueryPart[]> {
  const names = Object.keys(params);
  const one = (name: string) => params[name]!.arb.map((v) => ({ name, ...v }));
  const own: fc.Arbitrary<QueryPart[]> = fc
    .shuffledSubarray(names, { minLength: 0, maxLength: names.length })
    .chain((ns): fc.Arbitrary<QueryPart[]> => (ns.length ? fc.tuple(...ns.map(one)) : fc.constant([])));
  const repeated = fc.option(
    fc.constantFrom(...names).chain((n) => fc.tuple(one(n), one(n))),
    { freq: 4 },
  );
  const foreign = fc.option(
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom("__proto__", "constructor", "", "a".repeat(2000), ...names.map((n) => `${n}[]`), ...names.map((n) => `${n}[0]`)),
          hostileString.filter((s) => s.length < 200),
        ),
        hostileQueryValue,
      )
      .map(([name, v]) => [{ name, ...v }]),
    { freq: 4 },
  );
  return fc.tuple(own, repeated, foreign).map(([o, r, f]) => [...o, ...(r ?? []), ...(f ?? [])]);
}

/** A GET route: each parameter alone with each of its curated values (with `fixedHeaders`), then random queries. */
function getRoute(
  route: string,
  path: string,
  count: number,
  params: Record<string, Pool<QueryValue>>,
  headers: fc.Arbitrary<Headers>,
  fixedHeaders: Headers,
): RouteGen {
  const request = (parts: QueryPart[], h: Headers): FuzzRequest => ({
    route,
    method: "GET",
    path: path + queryString(parts),
    headers: h,
    note: parts.length ? `query ${parts.map((p) => p.name.slice(0, 20)).join(",")}` : "no query",
    mustReject: false,
  });
  return {
    route,
    phase: "reject",
    count,
    arb: fc.tuple(queryArb(params), headers).map(([parts, h]) => request(parts, h)),
    fixed: Object.entries(params).flatMap(([name, p]) => p.consts.map((v) => request([{ name, ...v }], fixedHeaders))),
  };
}

/** A route with an id in its path (`make(id)` builds the path): each curated id once, then random ones. */
function idRoute(
  route: string,
  make: (id: string) => string,
  ids: Pool<string>,
  count: number,
  headers: fc.Arbitrary<Headers>,
  fixedHeaders: Headers,
  opts: { body?: fc.Arbitrary<GeneratedBody | null>; mustReject: boolean },
): RouteGen {
  const [method] = route.split(" ") as [string];
  const request = (id: string, h: Headers, b: GeneratedBody | null): FuzzRequest =>
    b
      ? withBody(route, method, make(id), h, { ...b, note: `id ${id.slice(0, 40)}; ${b.note}` }, opts.mustReject)
      : { route, method, path: make(id), headers: h, note: `id ${id.slice(0, 40)}`, mustReject: opts.mustReject };
  return {
    route,
    phase: "reject",
    count,
    arb: fc.tuple(ids.arb, headers, opts.body ?? fc.constant(null)).map(([id, h, b]) => request(id, h, b)),
    fixed: ids.consts.map((id) => request(id, fixedHeaders, null)),
  };
}

// ---- the catalogue ----

export function restRoutes(ctx: FuzzContext): RouteGen[] {
  const main = { "x-api-key": ctx.key };
  const keys = keyHeaders(ctx);
  const anyKey = keyHeaders(ctx, [ctx.key, ctx.bareKey, ctx.otherKey]);
  const publicHeaders = fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: keys });
  const uuids = [...ctx.payments, ctx.otherPayment];
  const paymentIds = hostileId(uuids);
  const asQuery = (p: Pool<string>, raw = false): Pool<QueryValue> =>
    pool(
      p.consts.map((value) => ({ value, raw })),
      p.arb.map((value) => ({ value, raw })),
      hostileQueryValue,
    );
  const dates = queryPool(...HOSTILE_DATES);
  const listParams = {
    limit: queryPool(...NUMBERISH),
    cursor: asQuery(forgedCursor(uuids)),
    status: queryPool("pending", "PENDING", "pending ", "completed,paid", "expired", "sanctioned"),
    createdAfter: dates,
    createdBefore: dates,
    orderId: queryPool("fuzz-order", "FUZZ-ORDER", ...HOSTILE_STRINGS.filter((s) => s.length < 300)),
  };
  const anyBody: fc.Arbitrary<GeneratedBody | null> = fc.option(
    fc.oneof(
      anyJson.map((v) => ({ body: JSON.stringify(v) ?? "null", contentType: "application/json", note: "any JSON" })),
      hostileString.map((s) => ({ body: s, contentType: "text/plain", note: "text" })),
    ),
  );
  const recoverBody: fc.Arbitrary<GeneratedBody | null> = fc.oneof(
    fc
      .oneof(notString.arb, hostileString, fc.constantFrom(...ADDRESS_LIKE, zeroAddress, ctx.usdt, ctx.usdc), randomAddress)
      .map((t) => ({ body: JSON.stringify({ token: t }) ?? "{}", contentType: "application/json", note: "token" })),
    anyBody,
  );
  const tokenQuery = {
    chainId: queryPool("137", "777177", "1", "0", "-1", "99999999999999999999", "1e3", "0x89", " 137", "137 "),
    address: union(
      queryPool(ctx.usdt, zeroAddress, "0x123", ctx.usdt.toUpperCase(), ctx.usdt.toLowerCase()),
      asQuery(pool([ctx.usdc], randomAddress)),
    ),
  };
  const symbols = queryPool("USDT", "usdt0", "ETH", "", "MATIC", "usdt", ...HOSTILE_STRINGS.filter((s) => s.length < 300));
  const sessionHeaders = { cookie: ctx.sessionCookie };
  const noise = { x: queryPool() };
  const vaultCreateKeys = keyHeaders(ctx, [ctx.bareKey, ctx.key]);

  return [
    // Payments
    ...bodyRoute("POST /api/payments", "/api/payments", paymentSpec(ctx), { invalid: 150, huge: 3 }, anyKey, main, "orderId"),
    getRoute("GET /api/v1/payments", "/api/v1/payments", 120, listParams, anyKey, main),
    // The same list behind the session cookie: random queries only (the curated ones run with the key above).
    {
      ...getRoute("GET /api/v1/payments (session)", "/api/v1/payments", 60, listParams, fc.constant(sessionHeaders), sessionHeaders),
      fixed: [],
    },
    {
      route: "GET /api/v1/payments (bad session)",
      phase: "reject",
      count: 20,
      arb: badCookie(ctx.sessionName, ctx.sessionToken).map((cookie) => ({
        route: "GET /api/v1/payments (bad session)",
        method: "GET",
        path: "/api/v1/payments",
        headers: { cookie },
        note: "forged session cookie",
        mustReject: false,
      })),
    },
    getRoute("GET /api/balance", "/api/balance", 20, noise, anyKey, main),
    getRoute("GET /api/promo-status", "/api/promo-status", 15, noise, anyKey, main),
    getRoute(
      "GET /api/payments/verify",
      "/api/payments/verify",
      50,
      {
        id: asQuery(paymentIds, true),
        hash: queryPool(ctx.verifyHash, ctx.verifyHash.toUpperCase(), ctx.verifyHash.slice(0, 10), ctx.verifyHash + "00", "0".repeat(64)),
      },
      publicHeaders,
      {},
    ),
    idRoute("GET /api/v1/payments/:id", (id) => `/api/v1/payments/${id}`, paymentIds, 30, anyKey, main, { mustReject: false }),
    idRoute("POST /api/v1/payments/:id/withdraw", (id) => `/api/v1/payments/${id}/withdraw`, paymentIds, 30, anyKey, main, {
      body: anyBody,
      mustReject: true,
    }),
    idRoute("POST /api/v1/payments/:id/recover", (id) => `/api/v1/payments/${id}/recover`, paymentIds, 40, anyKey, main, {
      body: recoverBody,
      mustReject: true,
    }),

    // Public lookups
    getRoute("GET /api/tokens/price", "/api/tokens/price", 40, { ...tokenQuery, symbol: symbols }, publicHeaders, {}),
    getRoute("GET /api/tokens/metadata", "/api/tokens/metadata", 40, tokenQuery, publicHeaders, {}),
    getRoute("GET /api/oracle/price", "/api/oracle/price", 30, { symbol: symbols }, publicHeaders, {}),

    // Payment webhooks
    getRoute("GET /api/v1/webhooks", "/api/v1/webhooks", 10, noise, anyKey, main),
    ...bodyRoute("PUT /api/v1/webhooks", "/api/v1/webhooks", webhookSpec(), { invalid: 60, huge: 2 }, keys, main, "url"),
    ...bodyRoute(
      "POST /api/v1/webhooks",
      "/api/v1/webhooks",
      {
        base: () => ({ action: "regenerate-secret" }),
        invalid: {
          action: badString(
            (s) => s !== "regenerate-secret",
            "REGENERATE-SECRET",
            "regenerate-secret ",
            "regenerate",
            "regenerate-secret\u0000",
          ),
        },
        required: ["action"],
        strict: false,
      },
      { invalid: 40, huge: 1 },
      keys,
      main,
    ),
    idRoute(
      "DELETE /api/v1/webhooks",
      () => "/api/v1/webhooks",
      pool([""]),
      15,
      noAuth(ctx, [ctx.otherKey]),
      { "x-api-key": ctx.otherKey },
      { mustReject: true },
    ),
    getRoute(
      "GET /api/v1/webhooks/deliveries",
      "/api/v1/webhooks/deliveries",
      50,
      {
        limit: queryPool(...NUMBERISH),
        cursor: asQuery(forgedCursor(uuids)),
        status: queryPool("pending", "success", "failed", "PENDING"),
        paymentId: asQuery(paymentIds, true),
        event: queryPool("payment.completed", "payment.*", "%", ...HOSTILE_STRINGS.filter((s) => s.length < 300)),
      },
      anyKey,
      main,
    ),
    idRoute("GET /api/v1/webhooks/deliveries/:id", (id) => `/api/v1/webhooks/deliveries/${id}`, hostileId(uuids), 15, anyKey, main, {
      mustReject: false,
    }),
    idRoute(
      "POST /api/v1/webhooks/deliveries/:id/resend",
      (id) => `/api/v1/webhooks/deliveries/${id}/resend`,
      hostileId(uuids),
      15,
      anyKey,
      main,
      {
        body: anyBody,
        mustReject: true,
      },
    ),

    // The event feed (docs/payments.md "Event feed"): read-only (what the setup wrote is positioned before the run).
    getRoute(
      "GET /api/v1/events",
      "/api/v1/events",
      40,
      {
        limit: queryPool(...NUMBERISH),
        after: union(queryPool("now", "NOW", "now ", "0", "-1", "", "null"), asQuery(forgedCursor(uuids))),
      },
      anyKey,
      main,
    ),
    idRoute("GET /api/v1/events/:id", (id) => `/api/v1/events/${id}`, hostileId(uuids), 20, anyKey, main, { mustReject: false }),

    // The merchant's settings (docs/payments.md "Underpayment tolerance")
    getRoute("GET /api/v1/settings/underpayment-tolerance", "/api/v1/settings/underpayment-tolerance", 10, noise, anyKey, main),
    ...bodyRoute(
      "PUT /api/v1/settings/underpayment-tolerance",
      "/api/v1/settings/underpayment-tolerance",
      toleranceSpec(ctx),
      { invalid: 60, huge: 1 },
      keys,
      main,
      "amounts",
    ),

    // Vault configuration
    ...bodyRoute(
      "POST /api/vault/v1/config",
      "/api/vault/v1/config",
      vaultCreateSpec(ctx),
      { invalid: 40, huge: 1 },
      vaultCreateKeys,
      { "x-api-key": ctx.bareKey },
      "businessName",
    ),
    getRoute("GET /api/vault/v1/config", "/api/vault/v1/config", 10, noise, anyKey, main),
    ...bodyRoute(
      "PATCH /api/vault/v1/config",
      "/api/vault/v1/config",
      vaultPatchSpec(ctx),
      { invalid: 40, huge: 1 },
      keys,
      main,
      "businessName",
    ),
    ...bodyRoute(
      "POST /api/vault/v1/config/tokens",
      "/api/vault/v1/config/tokens",
      vaultTokenSpec(ctx, ctx.usdt, true),
      { invalid: 40 },
      keys,
      main,
    ),
    // A valid body here would remove the vault's token: the base names a token that is not enabled (404 at best).
    ...bodyRoute(
      "DELETE /api/vault/v1/config/tokens",
      "/api/vault/v1/config/tokens",
      vaultTokenSpec(ctx, ctx.usdc, false),
      { invalid: 30 },
      keys,
      main,
    ),
    getRoute("GET /api/vault/v1/config/webhooks", "/api/vault/v1/config/webhooks", 10, noise, anyKey, main),
    ...bodyRoute(
      "PUT /api/vault/v1/config/webhooks",
      "/api/vault/v1/config/webhooks",
      vaultWebhookSpec(),
      { invalid: 40, huge: 1 },
      keys,
      main,
      "url",
    ),
    // No body, `{}` and `{"action": "regenerate-secret"}` are valid: every generated body has a wrong action or field.
    ...bodyRoute(
      "POST /api/vault/v1/config/webhooks",
      "/api/vault/v1/config/webhooks",
      {
        base: () => ({ action: "regenerate-secret" }),
        invalid: { action: badString((s) => s !== "regenerate-secret", "REGENERATE-SECRET", "regenerate", "regenerate-secret\u0000") },
        required: [],
        emptyIsValid: true,
        strict: true,
      },
      { invalid: 30 },
      keys,
      main,
    ),
    idRoute(
      "DELETE /api/vault/v1/config/webhooks",
      () => "/api/vault/v1/config/webhooks",
      pool([""]),
      10,
      noAuth(ctx, [ctx.bareKey]),
      { "x-api-key": ctx.bareKey },
      { mustReject: true },
    ),

    // Vault users and deposits
    ...bodyRoute(
      "POST /api/vault/v1/users",
      "/api/vault/v1/users",
      vaultUserSpec(ctx),
      { invalid: 40, huge: 1 },
      keys,
      main,
      "externalUserId",
    ),
    getRoute(
      "GET /api/vault/v1/users",
      "/api/vault/v1/users",
      40,
      {
        externalUserId: queryPool(ctx.userId, ctx.userId.toUpperCase(), "nobody", ...HOSTILE_STRINGS.filter((s) => s.length < 300)),
        chainId: queryPool(String(ctx.chainId), "137", "0", "-1", "2147483648", "9999999999", "1e3"),
        tokenAddress: queryPool(ctx.usdt, ctx.usdt.toLowerCase(), ctx.usdc, zeroAddress, badChecksum(ctx.usdt)),
      },
      keys,
      main,
    ),
    getRoute(
      "GET /api/vault/v1/deposits",
      "/api/vault/v1/deposits",
      30,
      {
        limit: queryPool(...NUMBERISH),
        status: queryPool("detected", "processing", "completed", "failed", "dropped"),
        externalUserId: queryPool(ctx.userId, ...HOSTILE_STRINGS.filter((s) => s.length < 300)),
      },
      keys,
      main,
    ),
    idRoute("POST /api/vault/v1/deposits/:id/recover", (id) => `/api/vault/v1/deposits/${id}/recover`, hostileId(uuids), 15, keys, main, {
      body: anyBody,
      mustReject: true,
    }),
    idRoute(
      "GET /api/vault/v1/business/:publicId/tokens",
      (id) => `/api/vault/v1/business/${id}/tokens`,
      union(
        pool([ctx.publicId.toUpperCase(), `${ctx.publicId}x`, "vlt_", "vlt_" + "_".repeat(22)]),
        pool(
          ["vlt_" + "A".repeat(22)],
          fc.string({ unit: fc.constantFrom(..."abcXYZ09_-"), minLength: 22, maxLength: 22 }).map((s) => `vlt_${s}`),
        ),
        hostileId([ctx.publicId]),
      ),
      30,
      publicHeaders,
      {},
      { mustReject: false },
    ),

    // Dashboard login
    ...bodyRoute(
      "POST /api/auth/login",
      "/api/auth/login",
      {
        base: () => ({ email: ctx.email, password: "not-the-password" }),
        invalid: { email: union(notString, pool([""])), password: union(notString, pool([""])) },
        required: ["email", "password"],
        strict: false,
      },
      { invalid: 20, huge: 1 },
      fc.constant({}),
      {},
    ),
    {
      route: "POST /api/auth/login",
      phase: "reject",
      count: 12,
      arb: fc
        .tuple(
          fc.oneof(
            hostileString,
            fc.constant(ctx.email),
            hostileString.map((s) => ctx.email + s),
          ),
          hostileString,
        )
        .filter(([e, p]) => e.length > 0 && p.length > 0)
        .map(([email, password]) => ({
          route: "POST /api/auth/login",
          method: "POST",
          path: "/api/auth/login",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email, password }),
          note: "wrong credentials",
          mustReject: true,
        })),
      // NUL and friends in the e-mail reach the account lookup.
      fixed: ["a\u0000b@example.com", `${ctx.email}\u0000`, "\ud800@example.com", "a".repeat(5000) + "@example.com"].map((email) => ({
        route: "POST /api/auth/login",
        method: "POST",
        path: "/api/auth/login",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "x\u0000y" }),
        note: "hostile e-mail",
        mustReject: true,
      })),
    },
    {
      route: "POST /api/auth/logout",
      phase: "reject",
      count: 20,
      arb: fc.tuple(fc.option(badCookie(ctx.sessionName, ctx.sessionToken)), anyBody).map(([cookie, b]) => ({
        route: "POST /api/auth/logout",
        method: "POST",
        path: "/api/auth/logout",
        headers: { ...(cookie ? { cookie } : {}), ...(b?.contentType ? { "content-type": b.contentType } : {}) },
        body: b?.body,
        note: cookie ? "forged session cookie" : "no cookie",
        mustReject: false,
      })),
    },

    getRoute("GET /api/health", "/api/health", 5, noise, publicHeaders, {}),

    // The payer page and its status route (web/pay/page.ts)
    idRoute("GET /pay/:id", (id) => `/pay/${id}`, paymentIds, 15, fc.constant({}), {}, { mustReject: false }),
    idRoute("GET /pay/:id/qr.svg", (id) => `/pay/${id}/qr.svg`, paymentIds, 10, fc.constant({}), {}, { mustReject: false }),
    {
      route: "GET /pay/assets/:file",
      phase: "reject",
      count: 15,
      arb: fc
        .tuple(
          fc.oneof(
            fc.constantFrom("pay.css", "pay.js", "..%2Fpage.ts", "pay.css%00", "%2e%2e%2f%2e%2e%2fpackage.json", "PAY.CSS"),
            hostileId(["pay.js"]).arb,
          ),
          hostileQueryValue,
          fc.option(hostileString.filter((s) => /^[\x20-\x7e]*$/.test(s))),
        )
        .map(([file, v, etag]) => ({
          route: "GET /pay/assets/:file",
          method: "GET",
          path: `/pay/assets/${file}?v=${v.raw ? v.value : pct(v.value)}`,
          headers: (etag !== null ? { "if-none-match": etag } : {}) as Headers,
          note: `file ${file.slice(0, 30)}`,
          mustReject: false,
        })),
    },
    idRoute(
      "GET /api/payments/:id/status",
      (id) => `/api/payments/${id}/status`,
      paymentIds,
      15,
      fc.constant({}),
      {},
      { mustReject: false },
    ),
  ];
}

/** Methods a route does not have, unknown paths and path tricks. */
export function oddRoutes(ctx: FuzzContext): RouteGen[] {
  const p = ctx.payments[0]!;
  const table: [string, string[]][] = [
    ["/api/payments", ["POST"]],
    ["/api/v1/payments", ["GET"]],
    [`/api/v1/payments/${p}`, ["GET"]],
    ["/api/balance", ["GET"]],
    ["/api/payments/verify", ["GET"]],
    ["/api/promo-status", ["GET"]],
    [`/api/v1/payments/${p}/withdraw`, ["POST"]],
    [`/api/v1/payments/${p}/cancel`, ["POST"]],
    [`/api/v1/payments/${p}/recover`, ["POST"]],
    ["/api/tokens/price", ["GET"]],
    ["/api/tokens/metadata", ["GET"]],
    ["/api/oracle/price", ["GET"]],
    ["/api/v1/webhooks", ["GET", "PUT", "POST", "DELETE"]],
    ["/api/v1/webhooks/deliveries", ["GET"]],
    ["/api/v1/events", ["GET"]],
    [`/api/v1/events/${p}`, ["GET"]],
    ["/api/v1/settings/underpayment-tolerance", ["GET", "PUT"]],
    ["/api/vault/v1/config", ["POST", "GET", "PATCH"]],
    ["/api/vault/v1/config/tokens", ["POST", "DELETE"]],
    ["/api/vault/v1/config/webhooks", ["GET", "PUT", "POST", "DELETE"]],
    ["/api/vault/v1/users", ["POST", "GET"]],
    ["/api/vault/v1/deposits", ["GET"]],
    [`/api/vault/v1/business/${ctx.publicId}/tokens`, ["GET"]],
    ["/api/auth/login", ["POST"]],
    ["/api/auth/logout", ["POST"]],
    ["/api/graphql", ["GET", "POST"]],
    ["/api/health", ["GET"]],
    [`/pay/${p}`, ["GET"]],
    [`/api/payments/${p}/status`, ["GET"]],
  ];
  const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "FOO", "PROPFIND", "M-SEARCH"];
  const pairs = table.flatMap(([path, ms]) =>
    METHODS.filter((m) => !ms.includes(m) && !(m === "HEAD" && !ms.includes("GET"))).map((m) => [path, m] as const),
  );
  const UNKNOWN = [
    "/api/nope",
    "/api/v1/payments/x/y/z",
    "/api/payments/%00",
    "/api/%2e%2e/%2e%2e/etc/passwd",
    "/api/../package.json",
    "//api/health",
    "/API/health",
    "/api/health/",
    "/api/v1/webhooks/deliveries/%ZZ",
    "/api/v1/webhooks/deliveries/%00/resend",
    "/pay/",
    "/pay",
    "/",
    "/favicon.ico",
    "/api/vault/v1/config/%2e%2e/config",
    "/api/graphql/x",
    "/api/vault/v1/business//tokens",
    "/api/payments/verify/extra",
    "/api/v1/payments/%C0%AF/withdraw",
    "/" + "a".repeat(6000),
    "/api/v1/payments?" + "a=1&".repeat(2000),
  ];
  const body = fc.option(anyJson.map((v) => JSON.stringify(v) ?? "null"));
  const auth = keyHeaders(ctx, [ctx.bareKey, ctx.otherKey]);
  const odd = (path: string, method: string, h: Headers, b: string | null): FuzzRequest => ({
    route: `odd method ${method}`,
    method,
    path,
    headers: b !== null ? { ...h, "content-type": "application/json" } : h,
    body: b !== null && method !== "GET" && method !== "HEAD" ? b : undefined,
    note: `${method} on a route without it`,
    mustReject: false,
  });
  const unknown = (path: string, method: string, h: Headers): FuzzRequest => ({
    route: "unknown path",
    method,
    path,
    headers: h,
    note: "unknown path",
    mustReject: false,
  });
  const key = { "x-api-key": ctx.bareKey };
  return [
    {
      route: "odd method",
      phase: "reject",
      count: 0,
      arb: fc.tuple(fc.constantFrom(...pairs), auth, body).map(([[path, method], h, b]) => odd(path, method, h, b)),
      fixed: pairs.map(([path, method]) => odd(path, method, key, "{}")),
    },
    {
      route: "unknown path",
      phase: "reject",
      count: 10,
      arb: fc
        .tuple(fc.constantFrom(...UNKNOWN), fc.constantFrom("GET", "POST", "DELETE"), auth)
        .map(([path, method, h]) => unknown(path, method, h)),
      fixed: UNKNOWN.map((path) => unknown(path, "GET", key)),
    },
  ];
}

/** Phase "maybe": valid bodies with one hostile value of the right type (NUL, lone surrogates, huge numbers...). */
export function maybeRoutes(ctx: FuzzContext): RouteGen[] {
  const gen = (route: string, path: string, spec: BodySpec, count: number, headers: Headers[]): RouteGen => {
    const [method] = route.split(" ") as [string];
    return {
      route,
      phase: "maybe",
      count,
      arb: fc.tuple(fc.constantFrom(...headers), maybeValidBody(spec)).map(([h, b]) => withBody(route, method, path, h, b, false)),
      fixed: enumerateBodies(spec, "hostile").map((b, i) => withBody(route, method, path, headers[i % headers.length]!, b, false)),
    };
  };
  const key = [{ "x-api-key": ctx.key }];
  return [
    gen("POST /api/payments", "/api/payments", paymentSpec(ctx), 10, key),
    gen("PUT /api/v1/webhooks", "/api/v1/webhooks", webhookSpec(), 5, key),
    gen("PUT /api/vault/v1/config/webhooks", "/api/vault/v1/config/webhooks", vaultWebhookSpec(), 5, key),
    gen("PATCH /api/vault/v1/config", "/api/vault/v1/config", vaultPatchSpec(ctx), 5, key),
    gen("POST /api/vault/v1/config/tokens", "/api/vault/v1/config/tokens", vaultTokenSpec(ctx, ctx.usdt, true), 5, key),
    gen(
      "POST /api/vault/v1/config",
      "/api/vault/v1/config",
      vaultCreateSpec(ctx),
      2,
      ctx.freshKeys.map((k) => ({ "x-api-key": k })),
    ),
    gen("POST /api/vault/v1/users", "/api/vault/v1/users", vaultUserSpec(ctx), 5, key),
    gen("PUT /api/v1/settings/underpayment-tolerance", "/api/v1/settings/underpayment-tolerance", toleranceSpec(ctx), 5, key),
  ];
}
