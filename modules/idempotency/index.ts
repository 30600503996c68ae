// The idempotency module's one door: other code imports only this file.
export { bodyFingerprint, valueFingerprint } from "./fingerprint.js";
export { checkIdempotencyKey, IDEMPOTENCY_HEADER, INVALID_KEY, type KeyUse, MAX_KEY_LENGTH, REPLAYED_HEADER } from "./key.js";
export {
  abandonIdempotencyKey,
  type Claim,
  type Claimed,
  claimIdempotencyKey,
  completeIdempotencyKey,
  IN_PROGRESS,
  keepIdempotencyKey,
  type KeyedRequest,
  keyScopeOf,
  OTHER_ENDPOINT,
  otherRequest,
  releaseIdempotencyKey,
  type StoredResponse,
} from "./store.js";
