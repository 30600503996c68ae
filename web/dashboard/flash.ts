import { createHmac } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Config } from "../../core/config.js";
import { createSecretBox, isSealed, secretBoxOf, type SecretBox } from "../../core/secret-box.js";
import { csrfCookieOf } from "./csrf.js";
import type { DashEnv } from "./env.js";

// A one-time message carried across a POST-redirect-GET: a secret shown once (new API key, webhook secret,
// cashier PIN) and notices. The POST seals it into a short-lived cookie and answers 303; the screen's GET
// opens it, shows it and clears the cookie, so a reload shows nothing and re-posts nothing.
//
// Why a cookie and not a server-side store: with API_WORKERS the GET may reach another process than the POST,
// and the dashboard adds no table. The cookie is sealed with core/secret-box.ts (AES-256-GCM under SECRET_KEY),
// bound to the screen's path, the session and the browser's form-token cookie (it opens only for them), carries
// its own expiry (5 minutes), and is HttpOnly, SameSite=Strict and scoped to the screen's path.

export const FLASH_COOKIE = "cp_flash";
export const FLASH_TTL_MS = 5 * 60_000;

export type Flash = {
  /** A secret shown once (layout.tsx `ShownOnce`, with its data-testid). */
  secret?: { label: string; value: string; testId: string };
  notices?: { kind: "ok" | "warn"; text: string; testId?: string }[];
};

const derived = new Map<string, SecretBox>();

/**
 * The box that seals flashes: SECRET_KEY's (required in production). A development service started without one
 * gets a key derived from HASH_SECRET, used for these 5-minute cookies only.
 */
function boxOf(config: Pick<Config, "SECRET_KEY" | "SECRET_KEY_PREVIOUS" | "HASH_SECRET">): SecretBox {
  if (config.SECRET_KEY) return secretBoxOf(config);
  let box = derived.get(config.HASH_SECRET);
  if (!box) {
    box = createSecretBox({ current: createHmac("sha256", config.HASH_SECRET).update("chainpay dashboard flash key").digest() });
    derived.set(config.HASH_SECRET, box);
  }
  return box;
}

/** What a flash is bound to: the screen, the session and the browser's form-token cookie. */
const contextOf = (c: Context<DashEnv>, path: string) => `dashboard flash:${path}:${c.var.session}:${csrfCookieOf(c, c.var.deps) ?? ""}`;

const cookieOptions = (c: Context<DashEnv>, path: string) =>
  ({ path, httpOnly: true, sameSite: "Strict", secure: c.var.deps.config.NODE_ENV === "production" }) as const;

/**
 * Leaves `flash` for the next GET of the screen at `path` (call it before redirecting there with 303).
 *
 * @example
 * setFlash(c, "/dashboard/api-keys", { secret: { label: "New API key", value: key, testId: "new-api-key" } });
 * return c.redirect("/dashboard/api-keys", 303);
 */
export function setFlash(c: Context<DashEnv>, path: string, flash: Flash): void {
  const exp = c.var.deps.now() + FLASH_TTL_MS;
  const sealed = boxOf(c.var.deps.config).seal(JSON.stringify({ exp, ...flash }), contextOf(c, path));
  setCookie(c, FLASH_COOKIE, sealed, { ...cookieOptions(c, path), maxAge: FLASH_TTL_MS / 1000 });
}

/**
 * The flash left for the screen at `path`, once: the cookie is cleared in this response. Null when there is
 * none, or it is expired, altered, or sealed for another session, browser or screen.
 *
 * @example
 * const flash = takeFlash(c, "/dashboard/api-keys"); // { secret: {...} } on the first GET after the POST, then null
 */
export function takeFlash(c: Context<DashEnv>, path: string): Flash | null {
  const stored = getCookie(c, FLASH_COOKIE);
  if (stored === undefined) return null;
  deleteCookie(c, FLASH_COOKIE, cookieOptions(c, path));
  // Only a sealed value: the box would hand back anything else as (legacy) plaintext.
  if (!isSealed(stored)) return null;
  try {
    const { exp, ...flash } = JSON.parse(boxOf(c.var.deps.config).open(stored, contextOf(c, path))) as Flash & { exp: unknown };
    return typeof exp === "number" && exp > c.var.deps.now() ? flash : null;
  } catch {
    return null;
  }
}
