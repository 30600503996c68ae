// The vault module's one door: other code imports only this file.
export { vaultOfCaller } from "./config-access.js";
export { listMerchantVaults, rebindVault, setVaultFee } from "./config-operator.js";
export { tokenToEnableBody, tokenToRemoveBody } from "./config-parse.js";
export { createVault, createVaultBody, getVault, updateVault, updateVaultBody } from "./config.js";
export { listVaultDeposits, requestDepositRecovery, vaultDepositsQuery } from "./deposits.js";
export { transitionDeposit } from "./transition.js";
export { confirmedTip, readVaultDepositCursor, recordVaultDeposits, vaultConfirmations } from "./detect-deposits.js";
export {
  merchantVault,
  type MerchantVault,
  merchantVaults,
  type VaultDepositRow,
  vaultDepositsPage,
  vaultUsersPage,
} from "./merchant-vaults.js";
export { LISTED_DEPOSIT_STATUSES } from "./serialize-deposit.js";
export { sweepVaultChain } from "./sweep.js";
export { addVaultToken, publicVaultTokens, removeVaultToken } from "./tokens.js";
export { createVaultUser, createVaultUserBody, getVaultUser, vaultUserQuery } from "./users.js";
export { deleteVaultWebhook, getVaultWebhook, putVaultWebhook, regenerateVaultWebhook, regenerateVaultWebhookBody } from "./webhooks.js";
export { type VaultGroup, type VaultScreening } from "./screening.js";
export { moveVaultToKey } from "./move-to-key.js";
