import type { Config } from "./config.js";

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

/** The request headers a browser's origin check reads. */
export type OriginHeaders = { method: string; origin?: string; secFetchSite?: string; referer?: string };

/**
 * Whether a state-changing request comes from another origin than the service's own (a CSRF attempt): `Origin`,
 * which browsers send on every cross-origin POST and which no page can forge, must be ours; without it,
 * `Sec-Fetch-Site` (when sent) must be `same-origin` or `none` (a page on another port or a sibling subdomain is
 * `same-site`: refused), and a `Referer` (when sent) must be ours. A request with none of them is no browser's
 * cross-origin request (curl, a server): not refused. Safe methods are never refused.
 *
 * @example
 * if (isCrossOrigin(config, { method: "POST", origin: "http://127.0.0.1:9999" })) throw new Forbidden("Cross-origin request refused");
 */
export function isCrossOrigin(config: Config, h: OriginHeaders): boolean {
  if (SAFE_METHODS.has(h.method)) return false;
  const own = ownOrigins(config);
  if (h.origin !== undefined) return !own.has(h.origin);
  const site = h.secFetchSite;
  return (site !== undefined && site !== "same-origin" && site !== "none") || (h.referer !== undefined && !own.has(originOf(h.referer)));
}
