// The settlement module's one door: other code imports only this file.
export { SWEEP_GAS_PER_PAYMENT_BOUND } from "./batch-size.js";
export { complete } from "./complete.js";
export { reconcile } from "./reconcile.js";
export { settleRecoveries } from "./recover.js";
export { reserve } from "./reserve.js";
export { send } from "./send.js";
export { settlerAccount, type SettlerHooks } from "./shared.js";
export { type ChainBacklog, settlementBacklog } from "./backlog.js";
export { signerIssue } from "./runway.js";
export { serviceSigners, signerRunways, type ServiceSigner, type SignerRole, type SignerRunway } from "./signer-runway.js";
