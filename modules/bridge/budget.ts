import type { Config } from "../../core/config.js";
import { RateLimited, Unavailable } from "../../core/errors.js";
import { logger } from "../../core/log.js";
import { BRIDGE_UNAVAILABLE } from "./dln.js";

/**
 * The provider's request budget, for the calls payers' pages cause (docs/bridge.md, "Provider budget"). DLN allows 50
 * requests a minute per endpoint without an access token (300 with one), counted for the whole service: the
 * per-address limit of the routes alone let a few addresses spend it for every payer. So each endpoint the public
 * routes call has one service-wide budget (create-tx for quotes, order-ids for reports), and each payment a share of
 * the quotes. The processor's status requests have their own budget (poll.ts statusBudget, another endpoint).
 */

/** DLN endpoints the public routes call. */
export type ProviderEndpoint = "create-tx" | "order-ids";

/**
 * Takes one request from the token bucket `key` (refilling `perMinute`, a burst of as many), shared by every API
 * replica: the API gives its Postgres buckets (api/middleware/rate-limit-store.ts); modules know no HTTP.
 */
export type TakeToken = (key: string, perMinute: number) => Promise<{ allowed: boolean; retryAfterSeconds: number }>;

/** Without an access token, under DLN's 50 a minute (their clock and ours are not aligned); with one, under 300. */
export const PROVIDER_REQUESTS_PER_MINUTE = { keyless: 40, withKey: 250 } as const;

/** Quotes the provider is asked for one payment a minute: a payer's page asks once per source and every 30 s. */
export const QUOTES_PER_PAYMENT_PER_MINUTE = 10;

/**
 * The service-wide budget of each provider endpoint, per minute.
 * @example providerRequestsPerMinute({ BRIDGE_API_KEY: undefined, BRIDGE_PROVIDER_REQUESTS_PER_MINUTE: undefined }) // 40
 */
export function providerRequestsPerMinute(config: Pick<Config, "BRIDGE_API_KEY" | "BRIDGE_PROVIDER_REQUESTS_PER_MINUTE">): number {
  return (
    config.BRIDGE_PROVIDER_REQUESTS_PER_MINUTE ??
    (config.BRIDGE_API_KEY ? PROVIDER_REQUESTS_PER_MINUTE.withKey : PROVIDER_REQUESTS_PER_MINUTE.keyless)
  );
}

let lastWarned = 0;

/**
 * Spends one provider request of `endpoint` (and, for a quote, of its payment's share) before the provider is asked.
 * Throws RateLimited `Too many requests` when the payment's share is spent (that payment's callers asked too often),
 * Unavailable `Bridge unavailable` with a Retry-After when the service's budget is (what DLN's own 429 answers).
 * @example await spendProviderRequest(take, deps.config, "create-tx", paymentId);
 */
export async function spendProviderRequest(
  take: TakeToken,
  config: Pick<Config, "BRIDGE_API_KEY" | "BRIDGE_PROVIDER_REQUESTS_PER_MINUTE">,
  endpoint: ProviderEndpoint,
  paymentId?: string,
): Promise<void> {
  if (paymentId) {
    const mine = await take(`bridge.quotes:${paymentId}`, QUOTES_PER_PAYMENT_PER_MINUTE);
    if (!mine.allowed) throw new RateLimited(mine.retryAfterSeconds);
  }
  const perMinute = providerRequestsPerMinute(config);
  const all = await take(`bridge.provider:${endpoint}`, perMinute);
  if (all.allowed) return;
  // Once a minute at most: under a flood every refused request would log.
  if (Date.now() - lastWarned > 60_000) {
    lastWarned = Date.now();
    logger("bridge").warn(`provider budget spent: ${perMinute} ${endpoint} requests a minute (BRIDGE_PROVIDER_REQUESTS_PER_MINUTE)`);
  }
  throw new Unavailable(BRIDGE_UNAVAILABLE, all.retryAfterSeconds);
}
