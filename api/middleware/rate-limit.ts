import { getConnInfo } from "@hono/node-server/conninfo";
import ipaddr from "ipaddr.js";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import type { Context, MiddlewareHandler } from "hono";
import type { AppDeps } from "../../core/deps.js";
import { RateLimited } from "../../core/errors.js";
import { isTrustedProxy } from "../../core/trusted-proxies.js";
import { findMerchant } from "../../modules/merchants/index.js";
import { TOO_MANY_LOGINS } from "../../modules/merchants/index.js";
import type { AppEnv } from "../context.js";
import { keyCaller } from "./api-key.js";
import { takeMany, type BatchedLookup } from "./rate-limit-many.js";
import { peek, take, takeAnd, type Also, type Rate, type Take } from "./rate-limit-store.js";

export const MINUTE = 60_000;

type Limit = { limit: number; by: "merchant" | "ip"; message?: string };

/**
 * The spec's limits ("Limits", interface.md) and ours, per minute. A scope is one budget: the REST route(s)
 * and the GraphQL field of the same operation take from the same bucket. `merchant` budgets belong to the
 * merchant account (every API key of it together); a request whose key does not resolve counts per IP.
 */
export const LIMITS = {
  /** POST /payments, GraphQL createPayment. */
  "payments.create": { limit: 100, by: "merchant" },
  /** Every /v1/agent route (docs/agents.md). */
  agent: { limit: 60, by: "merchant" },
  /** GET /balance, GraphQL balance. */
  balance: { limit: 60, by: "merchant" },
  /** POST /v1/payments/{id}/recover, GraphQL recoverFunds (docs/unexpected-funds.md). */
  "payments.recover": { limit: 10, by: "merchant" },
  /** Every /vault/v1/config* route, GraphQL vaultConfig. */
  "vault.config": { limit: 100, by: "merchant" },
  /** POST /vault/v1/users. */
  "vault.users.create": { limit: 100, by: "merchant" },
  /** GET /vault/v1/users, GraphQL vaultUser. */
  "vault.users.read": { limit: 1000, by: "merchant" },
  /** GET /vault/v1/deposits, GraphQL vaultDeposits. */
  "vault.deposits": { limit: 100, by: "merchant" },
  /** POST /vault/v1/deposits/{id}/recover. */
  "vault.deposits.recover": { limit: 100, by: "merchant" },
  /** GET /payments/{id}/bridge/quote and POST /payments/{id}/bridge/orders (public; each asks the bridge provider). */
  "payments.bridge": { limit: 30, by: "ip" },
  /** GET /vault/v1/business/{publicId}/tokens (public). */
  "vault.public-tokens": { limit: 60, by: "ip" },
  /** POST /auth/login: attempts, whatever their outcome (each costs a password hash). */
  "auth.login": { limit: 20, by: "ip", message: TOO_MANY_LOGINS },
  /** POST /dashboard/signup: accounts an address may create. */
  "dashboard.signup": { limit: 5, by: "ip" },
  /** Every /dashboard and /pos request of an address (pages, forms, assets): a flood guard. */
  "web.requests": { limit: 1200, by: "ip" },
  /** Every /api request of an address (api/middleware/ip-limits.ts): a flood guard above one merchant's budgets (~1,600). */
  requests: { limit: 3000, by: "ip" },
  /** Requests of an address whose `x-api-key` matches no active key (ip-limits.ts). */
  "auth-failures": { limit: 30, by: "ip" },
} as const satisfies Record<string, Limit>;

export type Scope = keyof typeof LIMITS;

/** Whose bucket a request takes from. */
export type Holder = { merchantId: string } | { ip: string };

const parse = (s: string) => (ipaddr.isValid(s) ? ipaddr.process(s) : undefined);

/**
 * The caller's address. Direct callers are their socket's address. When the socket is a trusted proxy
 * (TRUSTED_PROXIES; or there is none, as in `app.request`), the rightmost X-Forwarded-For entry that is not
 * a trusted proxy: proxies append, so entries left of it may be forged.
 */
export function clientIp(c: Context<AppEnv>): string {
  const proxies = c.var.deps.config.TRUSTED_PROXIES;
  const trusted = (a: ipaddr.IPv4 | ipaddr.IPv6) => isTrustedProxy(proxies, a);
  let socket: string | undefined;
  try {
    socket = getConnInfo(c).remote.address;
  } catch {
    // No socket (app.request in tests).
  }
  const peer = socket ? parse(socket) : undefined;
  if (peer && !trusted(peer)) return peer.toString();
  const hops = (c.req.header("x-forwarded-for") ?? "").split(",").map((s) => s.trim());
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parse(hops[i]!);
    if (hop && (!trusted(hop) || i === 0)) return hop.toString();
  }
  return peer?.toString() ?? "unknown";
}

/** An address as a bucket owner: IPv4 as is, IPv6 by its /64 (one host usually holds the whole /64). */
export function ipBucket(ip: string): string {
  const a = parse(ip);
  if (!a) return "unknown";
  if (a.kind() === "ipv4") return a.toString();
  return `${(a as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(":")}::/64`;
}

const bucketKey = (scope: string, who: Holder) =>
  "merchantId" in who ? `m:${who.merchantId}:${scope}` : `ip:${ipBucket(who.ip)}:${scope}`;

export const rateOf = (limit: number): Rate => ({ limit, periodMs: MINUTE });

/** Takes one request of `scope` from `who`'s bucket. */
export function takeFor(deps: AppDeps, scope: Scope, who: Holder): Promise<Take> {
  return take(deps.db, bucketKey(scope, who), rateOf(LIMITS[scope].limit), deps.now());
}

/** takeFor() of `scope`, a peek at `peekScope` of the same holder, and `sql`, in one statement (rate-limit-store.ts takeAnd). */
export function takeAndPeekFor(
  deps: Pick<AppDeps, "db" | "now">,
  scope: Scope,
  peekScope: Scope,
  who: Holder,
  sql?: Also["sql"],
  merchantTake?: { scope: Scope; merchantIdSql: string },
) {
  const peekAt = { key: bucketKey(peekScope, who), rate: rateOf(LIMITS[peekScope].limit) };
  const then = merchantTake && {
    // bucketKey() of the merchant the SQL finds; the scope is one of LIMITS' names, never input.
    keySql: `(SELECT 'm:' || ${merchantTake.merchantIdSql} || ':${merchantTake.scope}')`,
    rate: rateOf(LIMITS[merchantTake.scope].limit),
  };
  return takeAnd(deps.db, bucketKey(scope, who), rateOf(LIMITS[scope].limit), deps.now(), { peek: peekAt, sql, then });
}

/**
 * takeAndPeekFor() of many requests in one statement (rate-limit-many.ts takeMany), answered in their order: each
 * request's holder, its `lookup` parameter (null: none) and the merchant scope taken once the lookup finds its merchant.
 */
export function takeAndPeekManyFor(
  deps: Pick<AppDeps, "db" | "now">,
  scope: Scope,
  peekScope: Scope,
  lookup: BatchedLookup,
  requests: { who: Holder; lookup: string | null; merchantScope?: Scope }[],
) {
  const items = requests.map((r) => ({
    key: bucketKey(scope, r.who),
    peekKey: bucketKey(peekScope, r.who),
    lookup: r.lookup,
    // bucketKey() of the merchant the lookup finds: `m:<id>:<scope>`.
    then:
      r.lookup !== null && r.merchantScope
        ? { prefix: "m:", suffix: `:${r.merchantScope}`, rate: rateOf(LIMITS[r.merchantScope].limit) }
        : null,
  }));
  return takeMany(deps.db, rateOf(LIMITS[scope].limit), rateOf(LIMITS[peekScope].limit), deps.now(), lookup, items);
}

/** Merchant budgets already taken for a request in ip-limits.ts's statement, by scope: rateLimit() uses them. */
const taken = new WeakMap<Request, { scope: Scope; take: Take }>();

/** Records that `scope`'s take of this request's merchant was made (ip-limits.ts). */
export function rememberTake(c: Context<AppEnv>, scope: Scope, take: Take): void {
  taken.set(c.req.raw, { scope, take });
}

/** The merchant-budget scope of the route a request is going to (its rateLimit() middleware), if any. */
export function merchantScopeOf(c: Context<AppEnv>): Scope | undefined {
  for (const r of matchedRoutes(c)) {
    const scope = (r.handler as { rateLimitScope?: Scope }).rateLimitScope;
    if (scope && LIMITS[scope].by === "merchant") return scope;
  }
  return undefined;
}

/** Whether `who` could take one request of `scope` now, without taking it (budgets spent only on failure). */
export function peekFor(deps: AppDeps, scope: Scope, who: Holder): Promise<Take> {
  return peek(deps.db, bucketKey(scope, who), rateOf(LIMITS[scope].limit), deps.now());
}

/** Seconds to wait, at least 1. */
export const retryAfterSeconds = (t: Take) => Math.max(1, Math.ceil(t.retryAfterMs / 1000));

/** draft-7 `RateLimit` and `RateLimit-Policy` headers of a take. */
export function setRateLimitHeaders(c: Context, limit: number, t: Take) {
  c.header("RateLimit-Policy", `${limit};w=${MINUTE / 1000}`);
  c.header("RateLimit", `limit=${limit}, remaining=${t.remaining}, reset=${Math.max(0, Math.ceil(t.resetMs / 1000))}`);
}

/** The holder of a request's budget: the merchant of its `x-api-key` (looked up once per request), else its address. */
async function holderOf(c: Context<AppEnv>, by: "merchant" | "ip"): Promise<Holder> {
  if (by === "merchant") {
    const merchant = c.var.merchant ?? (await findMerchant(c.var.deps, keyCaller(c)));
    if (merchant) return { merchantId: merchant.id };
  }
  return { ip: clientIp(c) };
}

/**
 * A route's limit (LIMITS): 429 `Too many requests` beyond it, thrown so the route family's error body
 * applies, with draft-7 `RateLimit` / `RateLimit-Policy` and `Retry-After` headers. `first`: the route runs it before
 * anything that could refuse the request, so a merchant budget is taken in ip-limits.ts's statement with the key (one
 * round trip fewer); without it, it is taken here.
 */
export function rateLimit(scope: Scope, opts: { first?: boolean } = {}): MiddlewareHandler<AppEnv> {
  const { limit, by, message }: Limit = LIMITS[scope];
  const middleware = createMiddleware<AppEnv>(async (c, next) => {
    // Taken already with the address's budget and the key, in one statement (ip-limits.ts), when the key resolved.
    const pre = taken.get(c.req.raw);
    const t = pre?.scope === scope ? pre.take : await takeFor(c.var.deps, scope, await holderOf(c, by));
    setRateLimitHeaders(c, limit, t);
    if (!t.allowed) throw new RateLimited(retryAfterSeconds(t), message);
    await next();
  });
  // `first`: nothing before it in the route can refuse the request, so ip-limits.ts may take the budget early.
  return opts.first ? Object.assign(middleware, { rateLimitScope: scope }) : middleware;
}
