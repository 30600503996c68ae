import { Invalid } from "../../core/errors.js";

// What an idempotency key is (docs/payments.md "Idempotency keys"): the caller's name for one operation, e.g. a UUID it made
// before the first attempt and sends again on every retry. The same rules for the REST header and the GraphQL argument.

/** The REST request header. */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** Set on a response that is a stored one, sent again. */
export const REPLAYED_HEADER = "Idempotent-Replayed";
/** Longest key, in characters. */
export const MAX_KEY_LENGTH = 255;
/** How long the first response is kept (from the first request). */
export const KEY_TTL_MS = 24 * 60 * 60_000;
/**
 * A key still `processing` whose request has not shown a sign of life for this long (on the database's clock) is taken
 * to be abandoned (the process died mid-request) and may be claimed again by a retry with the same request.
 */
export const PROCESSING_TIMEOUT_MS = 2 * 60_000;
/** How often a running request refreshes its claim (`locked_at`): a slow request is never taken for a dead one. */
export const HEARTBEAT_MS = 30_000;

/**
 * One use of a key by one API key, as an operation may record it (payments.idempotency_*, modules/payments/create.ts):
 * a retry that runs again under the same use finds what the first attempt created. `useId` is idempotency_keys.id.
 */
export type KeyUse = { apiKeyId: string; key: string; useId: string };

export const INVALID_KEY = `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters`;

const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** The key, checked: 1..255 printable ASCII characters; throws Invalid otherwise. */
export function checkIdempotencyKey(key: unknown): string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH || !PRINTABLE_ASCII.test(key))
    throw new Invalid(INVALID_KEY);
  return key;
}
