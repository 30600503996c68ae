// The merchants module's one door: other code imports only this file.
export {
  type ApiKeyView,
  createNamedApiKey,
  listApiKeys,
  type KeyAdminDeps,
  type MoveVault,
  type RollResult,
  NAME_MAX,
  revokeApiKey,
  ROLL_OVERLAPS,
  rollApiKey,
} from "./api-key-admin.js";
export { hashApiKey, hashToken, liveKeySql, newToken } from "./api-keys.js";
export { keyOwner, type KeyOwner } from "./key-owner.js";
export { authenticate, type Caller, findMerchant, KEY_LOOKUP_BATCH, keyHashOf, keyLookupSql, rememberMerchant } from "./authenticate.js";
export {
  ACCOUNT_THROTTLE,
  ADDRESS_THROTTLE,
  addressKey,
  clearFailures,
  countAttempt,
  failuresOf,
  releaseAttempt,
  reserveAttempt,
  type ThrottlePolicy,
  TOO_MANY_LOGINS,
} from "./login-throttle.js";
export {
  createApiKey,
  createMerchant,
  listMerchants,
  MERCHANT_TYPES,
  merchantByEmail,
  type MerchantType,
  setMerchantPassword,
  setMerchantType,
} from "./merchants.js";
export { ARGON2 } from "./passwords.js";
export { createSession, login, loginForm, logout, merchantIdForSession, SESSION_COOKIE, SESSION_TTL_MS } from "./sessions.js";
export {
  AMOUNT_MESSAGE,
  AMOUNTS_MESSAGE,
  BPS_MESSAGE,
  MAX_TOLERANCE_BPS,
  CHAIN_MESSAGE,
  DUPLICATE_TOKEN,
  getUnderpaymentTolerance,
  NOT_AN_OBJECT,
  precisionMessage,
  putUnderpaymentTolerance,
  TOKEN_MESSAGE,
  toleranceTermsOf,
  TOO_MANY_AMOUNTS,
  type UnderpaymentTolerance,
  underpaymentToleranceBody,
  UNSUPPORTED_NETWORK,
  UNSUPPORTED_TOKEN,
} from "./underpayment-tolerance.js";
export { setMerchantAgent, setMerchantGasTankAlert } from "./account-links.js";
