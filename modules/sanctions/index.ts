// The sanctions module's one door: other code imports only this file.
export { admitForSettlement } from "./admit.js";
export { sanctionsBlockedFunds } from "./blocked.js";
export { type Target } from "./holds.js";
export { LIST_LIMIT_MESSAGE, listHolds } from "./list.js";
export { admitRecoveries, RECOVERY_HELD_ERROR } from "./recovery.js";
export { rejectHold } from "./reject.js";
export { releaseHold } from "./release.js";
export { settleReturns } from "./return-settle.js";
export { returnHeldFunds } from "./return.js";
export { admitVaultGroups, closeDroppedDepositHolds } from "./vault.js";
export { notBackingOff, UNAVAILABLE_RETRY_MS } from "./waits.js";
