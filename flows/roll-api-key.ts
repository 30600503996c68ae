import { type KeyAdminDeps, rollApiKey as rollKey, type RollResult } from "../modules/merchants/index.js";
import { moveVaultToKey } from "../modules/vault/index.js";

/**
 * Rolls a merchant's API key (dashboard, CLI): a new key with the same name, the old one revoked or expiring after the
 * overlap, and the vault bound to the old key moved to the new one, in one transaction. Keys are the merchants
 * module's, vaults the vault module's: this joins the two.
 *
 * @example
 * const { key, previous, movedVault } = await rollApiKey(deps, merchant.id, keyId, "24h");
 */
export function rollApiKey(deps: KeyAdminDeps, merchantId: string, keyId: string, overlap: unknown): Promise<RollResult> {
  return rollKey(deps, merchantId, keyId, overlap, moveVaultToKey);
}
