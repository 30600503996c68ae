import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { Logger } from "../../core/log.js";
import { httpRequestDuration } from "../../core/metrics.js";
import type { AppEnv } from "../context.js";

/**
 * Every request, after hono/request-id has named it: a child logger carrying `reqId` for the handlers and the
 * error handler (`c.var.log`), then one access line and the latency histogram once the response is known. The
 * route label is the matched pattern (`/api/payments/:id`; an unmatched path counts under the middleware's `/*`),
 * never the raw path: one series per route, whatever ids clients send.
 */
export function observe(log: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const reqLog = log.child({ reqId: c.var.requestId });
    c.set("log", reqLog);
    await next();
    const ms = performance.now() - started;
    const route = routePath(c);
    const status = c.res.status;
    httpRequestDuration.labels(c.req.method, route, String(status)).observe(ms / 1000);
    reqLog.info({ method: c.req.method, route, path: c.req.path, status, ms: Math.round(ms * 10) / 10 }, "request");
  };
}
