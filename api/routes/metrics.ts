import { createHash, timingSafeEqual } from "node:crypto";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";
import { Hono } from "hono";
import ipaddr from "ipaddr.js";
import { registry } from "../../core/metrics.js";
import { groupMetrics, inMetricsCluster, joinMetricsCluster, metricsFromPrimary } from "../metrics-cluster.js";
import type { AppEnv } from "../context.js";

// GET /metrics: this process's metrics in Prometheus' text format (core/metrics.ts), with the scrape-time gauges
// of shared state (modules/metrics/gauges.ts). Not for the public: with METRICS_TOKEN set a scrape must carry
// `Authorization: Bearer <METRICS_TOKEN>`; without it, in production the API port does not answer it at all, and
// elsewhere only a direct connection from this host (loopback peer and no proxy's forwarding header).
// The METRICS_PORT listener (api/metrics-server.ts) serves this route alone, reachable as its bind address allows.

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Constant-time comparison of the presented bearer token with METRICS_TOKEN (hashed first: equal lengths). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const presented = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim() ?? "";
  return timingSafeEqual(digest(presented), digest(token));
}

const FORWARDING_HEADERS = ["forwarded", "x-forwarded-for", "x-real-ip"];

function directFromThisHost(c: Context<AppEnv>): boolean {
  let address: string | undefined;
  try {
    address = getConnInfo(c).remote.address;
  } catch {
    return false; // no socket (app.request)
  }
  if (!address || !ipaddr.isValid(address)) return false;
  if (ipaddr.process(address).range() !== "loopback") return false;
  return FORWARDING_HEADERS.every((h) => c.req.header(h) === undefined);
}

/**
 * Who may scrape: `open` on a dedicated listener whose bind address is its guard (METRICS_PORT). In an API worker
 * (API_WORKERS) the answer is the primary's, for the whole process group (api/metrics-cluster.ts).
 */
export function metricsRoute(opts: { open?: boolean } = {}) {
  joinMetricsCluster();
  return new Hono<AppEnv>().get("/metrics", async (c) => {
    const deps = c.var.deps;
    const token = deps.config.METRICS_TOKEN;
    if (token) {
      if (!bearerMatches(c.req.header("authorization"), token)) {
        c.header("WWW-Authenticate", 'Bearer realm="metrics"');
        return c.text("metrics: bearer token required\n", 401);
      }
    } else if (!opts.open && (deps.config.NODE_ENV === "production" || !directFromThisHost(c))) {
      // In production the API port is behind a proxy as a rule, and a proxy on this host that adds no forwarding
      // header (plain `proxy_pass`) would look like a local client: there, only METRICS_TOKEN or METRICS_PORT opens it.
      return c.text("metrics: set METRICS_TOKEN (or METRICS_PORT for a listener of its own) to scrape\n", 403);
    }
    const text = inMetricsCluster() ? await metricsFromPrimary() : await groupMetrics(deps);
    c.header("Content-Type", registry.contentType);
    c.header("Cache-Control", "no-store");
    return c.body(text);
  });
}
