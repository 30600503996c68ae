import { createHash } from "node:crypto";
import { getConnInfo } from "@hono/node-server/conninfo";
import { rateLimiter } from "hono-rate-limiter";
import { createMiddleware } from "hono/factory";
import type { Context, MiddlewareHandler } from "hono";
import type { AppDeps } from "../../core/deps.js";
import { DomainError } from "../../core/errors.js";
import type { AppEnv } from "../context.js";
import { rateLimitStore } from "./rate-limit-store.js";

/** The caller's address: the socket's, or behind a proxy without one, the first X-Forwarded-For. */
export const clientIp = (c: Context) => {
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return c.req.header("x-forwarded-for")?.split(",")[0]?.trim() ?? "unknown";
  }
};

/** The bucket a caller counts in: its API key (stored only hashed), else its address. */
export function rateLimitBucket(apiKey: string | undefined, ip: string): string {
  return apiKey ? `k:${createHash("sha256").update(apiKey).digest("hex").slice(0, 32)}` : `ip:${ip}`;
}

/**
 * Per-minute limits of the spec, keyed by API key (or by IP for public routes), counted in
 * Postgres so the limit holds across API replicas. 429 with `{error}` and draft-7
 * `RateLimit`/`RateLimit-Policy` and `Retry-After` headers.
 */
export function perMinute(limit: number, by: "key" | "ip" = "key"): MiddlewareHandler<AppEnv> {
  // Routes are defined once, apps (and databases) can be several: one limiter per app's deps.
  const limiters = new WeakMap<AppDeps, MiddlewareHandler<AppEnv>>();
  const scope = `${by}:${limit}`;
  return createMiddleware<AppEnv>(async (c, next) => {
    const deps = c.var.deps;
    let limiter = limiters.get(deps);
    if (!limiter) {
      limiter = rateLimiter<AppEnv>({
        windowMs: 60_000,
        limit,
        standardHeaders: "draft-7",
        store: rateLimitStore(deps),
        keyGenerator: (c) => {
          const key = c.req.header("x-api-key");
          return `${scope}:${c.req.routePath}:${rateLimitBucket(by === "key" ? key : undefined, clientIp(c))}`;
        },
        // Thrown, so the route family's error body applies (`{error}`, or `{success: false, error}` on the Vault).
        handler: () => {
          throw new DomainError("rate_limited", "Too many requests");
        },
      });
      limiters.set(deps, limiter);
    }
    return limiter(c, next);
  });
}
