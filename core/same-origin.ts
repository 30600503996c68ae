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

/** Those headers of a request (Hono's `c.req`, or anything with `method` and `header(name)`). */
export const originHeaders = (req: { method: string; header(name: string): string | undefined }): OriginHeaders => ({
  method: req.method,
  origin: req.header("origin"),
  secFetchSite: req.header("sec-fetch-site"),
  referer: req.header("referer"),
});

/** What a browser's `Sec-Fetch-Site` says of a request from the service's own origin (or typed by the user). */
const OWN_SITE = new Set(["same-origin", "none"]);

/**
 * Whether a state-changing request comes from another origin than the service's own (a CSRF attempt): `Origin`,
 * which browsers send on every cross-origin POST and which no page can forge, must be ours; without it,
 * `Sec-Fetch-Site` (when sent) must be `same-origin` or `none` (a page on another port or a sibling subdomain is
 * `same-site`: refused), and a `Referer` (when sent) must be ours. A request with none of them is no browser's
 * cross-origin request (curl, a server): not refused. Safe methods are never refused.
 * `strictSite`: `Sec-Fetch-Site` must be `same-origin` or `none` even beside an `Origin` of ours (forms posting to
 * their own page; the API's routes leave it off, since APP_URL and BASE_URL may be two origins of one site).
 *
 * @example
 * if (isCrossOrigin(config, originHeaders(c.req))) throw new Forbidden("Cross-origin request refused");
 */
export function isCrossOrigin(config: Config, h: OriginHeaders, opts: { strictSite?: boolean } = {}): boolean {
  if (SAFE_METHODS.has(h.method)) return false;
  const site = h.secFetchSite;
  const foreignSite = site !== undefined && !OWN_SITE.has(site);
  if (opts.strictSite && foreignSite) return true;
  const own = ownOrigins(config);
  if (h.origin !== undefined) return !own.has(h.origin);
  return foreignSite || (h.referer !== undefined && !own.has(originOf(h.referer)));
}
