import { getConnInfo } from "@hono/node-server/conninfo";
import { rateLimiter } from "hono-rate-limiter";
import type { Context } from "hono";
import type { AppEnv } from "../context.js";

const clientIp = (c: Context) => {
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return c.req.header("x-forwarded-for")?.split(",")[0]?.trim() ?? "unknown";
  }
};

/**
 * Per-minute limits of the spec, keyed by API key (or by IP for public routes). 429 with
 * `{error}` and draft-7 `RateLimit`/`Retry-After` headers. Counters live in this process:
 * behind N API replicas the effective limit is N times higher (documented in the README).
 */
export function perMinute(limit: number, by: "key" | "ip" = "key") {
  return rateLimiter<AppEnv>({
    windowMs: 60_000,
    limit,
    standardHeaders: "draft-7",
    keyGenerator: (c) => (by === "key" ? `k:${c.req.header("x-api-key") ?? clientIp(c)}` : `ip:${clientIp(c)}`),
    handler: (c) => c.json({ error: "Too many requests" }, 429),
  });
}
