import { createMiddleware } from "hono/factory";
import type { Config } from "../../core/config.js";
import { Forbidden } from "../../core/errors.js";
import type { AppEnv } from "../context.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const origins = new WeakMap<Config, Set<string>>();

/** The service's own origins: the API's (BASE_URL) and the pages' (APP_URL). */
function ownOrigins(config: Config): Set<string> {
  let own = origins.get(config);
  if (!own) {
    own = new Set();
    for (const url of [config.baseUrl, config.appUrl]) {
      try {
        own.add(new URL(url).origin);
      } catch {
        // Not a URL: no origin of ours to match.
      }
    }
    origins.set(config, own);
  }
  return own;
}

const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return "null";
  }
};

/**
 * CSRF guard of cookie-authenticated state changes (/auth/*): a request that changes state must come from the
 * service's own origin. Browsers send `Origin` on every cross-site POST; it must be ours (403 otherwise). Without
 * `Origin`, `Sec-Fetch-Site` (when sent) must be `same-origin` or `none`, and a `Referer` (when sent) must be ours.
 * A request with none of them is no browser's cross-site request (curl, a server): allowed.
 */
export const sameOrigin = createMiddleware<AppEnv>(async (c, next) => {
  if (!SAFE_METHODS.has(c.req.method)) {
    const own = ownOrigins(c.var.deps.config);
    const origin = c.req.header("origin");
    const site = c.req.header("sec-fetch-site");
    const referer = c.req.header("referer");
    const crossSite =
      origin !== undefined
        ? !own.has(origin)
        : (site !== undefined && site !== "same-origin" && site !== "none") || (referer !== undefined && !own.has(originOf(referer)));
    if (crossSite) throw new Forbidden("Cross-origin request refused");
  }
  await next();
});
