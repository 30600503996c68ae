/**
 * Retry schedule of webhook deliveries (spec "Retry (payment webhooks)"): 1st attempt immediately,
 * 2nd 5 minutes after the 1st failed, 3rd 10 minutes after the 2nd failed, then `failed` with no more
 * automatic retries (a manual resend adds one attempt). The same schedule serves Vault webhooks.
 * `payment.awaiting_gas` is informational and never retried: one attempt.
 * (The spec also mentions a "general schedule" of retries at 1, 5 and 30 minutes; the payment-webhook
 * schedule above is the one that applies to these deliveries.)
 */
export const RETRY_DELAYS_MS = [5 * 60_000, 10 * 60_000] as const;
export const DEFAULT_MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

export function maxAttemptsFor(event: string): number {
  return event === "payment.awaiting_gas" ? 1 : DEFAULT_MAX_ATTEMPTS;
}

/** After attempt number `attempt` (1-based, counted over the delivery's life) failed: the time of the next one, or null when the delivery is now failed. */
export function nextAttemptAt(attempt: number, maxAttempts: number, now: number): number | null {
  if (attempt >= maxAttempts) return null;
  const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1] ?? RETRY_DELAYS_MS[0];
  return now + delay;
}
