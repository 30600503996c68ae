/**
 * Payment webhook events: the spec's five ("Events"), plus `payment.reorged` (our extension: a counted
 * deposit left the canonical chain and the payment is pending again; docs/webhooks.md). All are subscribable.
 */
export const PAYMENT_EVENTS = [
  "payment.completed",
  "payment.withdrawn",
  "payment.awaiting_gas",
  "payment.failed",
  "payment.expired",
  "payment.reorged",
] as const;
export type PaymentEventName = (typeof PAYMENT_EVENTS)[number];

/** Subscription when `events` is omitted on creation (the spec's default; never `payment.reorged`). */
export const DEFAULT_PAYMENT_EVENTS: PaymentEventName[] = ["payment.completed", "payment.withdrawn"];

/** Vault webhook events; `deposit.*` subscribes to every deposit event. */
export const VAULT_EVENTS = ["deposit.completed", "deposit.failed"] as const;
export type VaultEventName = (typeof VAULT_EVENTS)[number];
export const VAULT_SUBSCRIPTIONS = [...VAULT_EVENTS, "deposit.*"] as const;

export const isPaymentEvent = (e: unknown): e is PaymentEventName =>
  typeof e === "string" && (PAYMENT_EVENTS as readonly string[]).includes(e);
export const isVaultEvent = (e: unknown): e is VaultEventName => typeof e === "string" && (VAULT_EVENTS as readonly string[]).includes(e);

/** Does a vault subscription list (`deposit.completed`, `deposit.*`, …) cover this event? */
export function vaultSubscribed(events: readonly string[], event: VaultEventName): boolean {
  return events.includes(event) || events.includes("deposit.*");
}

/** Unknown events named in an error, at most. */
const MAX_ECHOED = 5;

/**
 * Validates a requested event list against the allowed names: unknown names are an error, duplicates
 * are dropped, order is kept. An empty list is refused (deactivate the webhook with `isActive: false`).
 */
export function parseEventList<T extends string>(
  input: unknown,
  allowed: readonly T[],
): { ok: true; events: T[] } | { ok: false; error: string } {
  if (!Array.isArray(input) || input.some((e) => typeof e !== "string")) return { ok: false, error: "events must be an array of strings" };
  if (input.length === 0) return { ok: false, error: "events must contain at least one event" };
  const unknown = [...new Set(input.filter((e) => !(allowed as readonly string[]).includes(e)))];
  if (unknown.length) {
    // Named back, but never more than a few, each cut short: the error must not echo a whole hostile body.
    const shown = unknown.slice(0, MAX_ECHOED).map((e) => (e.length > 40 ? `${e.slice(0, 40)}…` : e));
    const more = unknown.length > MAX_ECHOED ? ` and ${unknown.length - MAX_ECHOED} more` : "";
    return {
      ok: false,
      error: `Unknown event${unknown.length > 1 ? "s" : ""}: ${shown.join(", ")}${more}. Subscribable events: ${allowed.join(", ")}`,
    };
  }
  return { ok: true, events: [...new Set(input as T[])] };
}
