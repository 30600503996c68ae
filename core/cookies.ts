import type { Config } from "./config.js";

/**
 * Cookie names and flags of the browser sessions (dashboard, POS, form tokens). With Secure cookies (production,
 * served over https) the names carry a prefix the browser enforces: `__Host-` (Secure, path "/", no Domain) for
 * site-wide cookies, so a page on a sibling subdomain cannot set ("toss") them; `__Secure-` for the POS cookie,
 * which is scoped to its terminal's path (`__Host-` requires path "/"). Over plain http (local stack) browsers
 * refuse both prefixes, so the bare names are used there.
 *
 * @example
 * getCookie(c, SESSION_COOKIE, cookiePrefix(deps.config));
 * setCookie(c, SESSION_COOKIE, token, { ...sessionFlags, secure: secureCookies(deps.config), prefix: cookiePrefix(deps.config) });
 */
export const secureCookies = (config: Pick<Config, "NODE_ENV">) => config.NODE_ENV === "production";

/** Hono's cookie prefix option for a site-wide cookie: `host` with Secure cookies, none otherwise. */
export const cookiePrefix = (config: Pick<Config, "NODE_ENV">) => (secureCookies(config) ? ("host" as const) : undefined);

/** The prefix of a path-scoped cookie (`__Host-` requires path "/"). */
export const pathCookiePrefix = (config: Pick<Config, "NODE_ENV">) => (secureCookies(config) ? ("secure" as const) : undefined);
