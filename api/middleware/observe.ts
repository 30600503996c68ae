import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { Logger, LogLevel } from "../../core/log.js";
import { httpRequestDuration } from "../../core/metrics.js";
import type { AppEnv } from "../context.js";
import type { RequestTally } from "./request-summary.js";

/**
 * Every request, after hono/request-id has named it: a child logger carrying `reqId` for the handlers and the
 * error handler (`c.var.log`), then one access line and the latency histogram once the response is known. The
 * route label is the matched pattern (`/api/payments/:id`; an unmatched path counts under the middleware's `/*`),
 * never the raw path: one series per route, whatever ids clients send.
 * `opts.level`: the access line's level (REQUEST_LOG_LEVEL; default info, debug under `npm start`); `opts.tally`
 * counts each request for the periodic summary line (api/middleware/request-summary.ts).
 */
export function observe(log: Logger, opts: { level?: LogLevel; tally?: RequestTally } = {}): MiddlewareHandler<AppEnv> {
  const level = opts.level ?? "info";
  return async (c, next) => {
    const started = performance.now();
    const reqLog = log.child({ reqId: c.var.requestId });
    c.set("log", reqLog);
    await next();
    const ms = performance.now() - started;
    const route = routePath(c);
    const status = c.res.status;
    httpRequestDuration.labels(c.req.method, route, String(status)).observe(ms / 1000);
    opts.tally?.record(c.req.method, route, status, ms);
    reqLog[level]({ method: c.req.method, route, path: c.req.path, status, ms: Math.round(ms * 10) / 10 }, "request");
  };
}
