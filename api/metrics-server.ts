import { serve } from "@hono/node-server";
import { Hono } from "hono";
import type { AppDeps } from "../core/deps.js";
import type { AppEnv } from "./context.js";
import { metricsRoute } from "./routes/metrics.js";

/**
 * GET /metrics alone on METRICS_HOST:METRICS_PORT (default host 127.0.0.1): the metrics of a process that serves
 * no API (ROLES=processors), or a scrape port kept apart from the public one. Its bind address guards it;
 * METRICS_TOKEN, when set, is required here too.
 */
export function startMetricsServer(
  deps: AppDeps,
  port: number,
  hostname = deps.config.METRICS_HOST,
): Promise<{ port: number; close(): Promise<void> }> {
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set("deps", deps);
    await next();
  });
  app.route("/", metricsRoute({ open: true }));
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info) =>
      resolve({ port: info.port, close: () => new Promise<void>((r) => server.close(() => r())) }),
    );
  });
}
