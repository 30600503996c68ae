import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { Unauthorized } from "../../core/errors.js";
import { findMerchant, type Caller } from "../../modules/merchants/index.js";
import type { AppEnv } from "../context.js";

const callers = new WeakMap<Request, Caller>();

/** The caller of a request by its `x-api-key`: one object per request, so the key is looked up once. */
export function keyCaller(c: Context<AppEnv>): Caller {
  let caller = callers.get(c.req.raw);
  if (!caller) callers.set(c.req.raw, (caller = { apiKey: c.req.header("x-api-key") }));
  return caller;
}

/**
 * K routes: sets `merchant` and `apiKey`. A missing or invalid key is answered 401 with
 * `unauthorized()` when given, else thrown as Unauthorized (the route family's body).
 */
export const requireApiKey = (unauthorized?: () => object) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const merchant = await findMerchant(c.var.deps, keyCaller(c));
    if (!merchant) {
      if (unauthorized) return c.json(unauthorized(), 401);
      throw new Unauthorized();
    }
    c.set("merchant", merchant);
    c.set("apiKey", c.req.header("x-api-key"));
    await next();
  });
