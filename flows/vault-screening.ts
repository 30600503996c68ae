import { admitVaultGroups, closeDroppedDepositHolds } from "../modules/sanctions/index.js";
import type { VaultScreening } from "../modules/vault/index.js";

/**
 * Sanctions screening of the Vault (docs/sanctions.md, "Vault"): what the sweeper and the deposit recorder are handed
 * (processors/vault-sweeper.ts, processors/vault-deposits.ts).
 *
 * @example
 * await sweepVaultChain(deps, chain, sender, vaultScreening);
 */
export const vaultScreening: VaultScreening = { admit: admitVaultGroups, closeDropped: closeDroppedDepositHolds };
