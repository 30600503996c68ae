import { z } from "zod";

/**
 * Payment webhook events: the spec's five ("Events"), plus our extensions (docs/webhooks.md), never in the default
 * subscription: `payment.reorged` (a counted deposit left the canonical chain and the payment is pending again),
 * `payment.cancelled` (cancelled by the merchant, a sanctioned payment rejected by the operator: no funds move, or one
 * whose funds the operator returned: `fundsReturned`) and
 * `payment.sanctioned` (a sender failed sanctions screening; funds held). All are subscribable.
 */
export const PAYMENT_EVENTS = [
  "payment.completed",
  "payment.withdrawn",
  "payment.awaiting_gas",
  "payment.failed",
  "payment.expired",
  "payment.reorged",
  "payment.cancelled",
  "payment.sanctioned",
] as const;
export type PaymentEventName = (typeof PAYMENT_EVENTS)[number];

/** Subscription when `events` is omitted on creation (the spec's default; never an extension event). */
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

const NOT_STRINGS = "events must be an array of strings";
/** The message of one unknown name; eventListError words them all together. */
const UNKNOWN_EVENT = "Unknown event";

/**
 * `events` of a webhook body: a non-empty list of `allowed` names, duplicates dropped, order kept. An empty list
 * is refused (deactivate the webhook with `isActive: false`). Word its issues with eventListError.
 * @example eventListField(PAYMENT_EVENTS).parse(["payment.failed", "payment.failed"]) // ["payment.failed"]
 */
export const eventListField = <T extends string>(allowed: readonly [T, ...T[]]) =>
  z
    .array(z.enum(allowed, { error: (iss) => (typeof iss.input === "string" ? UNKNOWN_EVENT : NOT_STRINGS) }), { error: NOT_STRINGS })
    .min(1, "events must contain at least one event")
    .transform((events) => [...new Set(events)]);

/**
 * The one message for the issues of an `events` list (paths relative to the list), in the order the checks
 * always ran: not a list of strings, then empty, then every unknown name (a few named, each cut short: the
 * error must not echo a whole hostile body).
 */
export function eventListError(issues: readonly z.core.$ZodIssue[], input: unknown, allowed: readonly string[]): string {
  if (!Array.isArray(input) || issues.some((i) => i.message === NOT_STRINGS)) return NOT_STRINGS;
  const other = issues.find((i) => i.message !== UNKNOWN_EVENT);
  if (other) return other.message;
  const names = issues.map((i) => input[i.path[0] as number] as string);
  const unknown = [...new Set(names)];
  const shown = unknown.slice(0, MAX_ECHOED).map((e) => (e.length > 40 ? `${e.slice(0, 40)}…` : e));
  const more = unknown.length > MAX_ECHOED ? ` and ${unknown.length - MAX_ECHOED} more` : "";
  return `Unknown event${unknown.length > 1 ? "s" : ""}: ${shown.join(", ")}${more}. Subscribable events: ${allowed.join(", ")}`;
}

/** Validates a requested event list against the allowed names (eventListField), with eventListError's message. */
export function parseEventList<T extends string>(
  input: unknown,
  allowed: readonly [T, ...T[]],
): { ok: true; events: T[] } | { ok: false; error: string } {
  const r = eventListField(allowed).safeParse(input);
  return r.success ? { ok: true, events: r.data } : { ok: false, error: eventListError(r.error.issues, input, allowed) };
}
