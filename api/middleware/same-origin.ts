import { createMiddleware } from "hono/factory";
import { Forbidden } from "../../core/errors.js";
import { isCrossOrigin, originHeaders } from "../../core/same-origin.js";
import type { AppEnv } from "../context.js";

/**
 * CSRF guard of cookie-authenticated state changes (/auth/*): a request that changes state must come from the
 * service's own origin (core/same-origin.ts); 403 otherwise. The dashboard and POS forms check the same in
 * their form guard (web/dashboard/csrf.ts).
 */
export const sameOrigin = createMiddleware<AppEnv>(async (c, next) => {
  if (isCrossOrigin(c.var.deps.config, originHeaders(c.req))) throw new Forbidden("Cross-origin request refused");
  await next();
});
