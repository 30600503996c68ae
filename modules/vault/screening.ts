import type pg from "pg";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";

/** A deposit address and token: what one sweep moves. */
export type VaultGroup = { address: string; token: string };

/**
 * What the Vault needs of sanctions screening. The sanctions module sits above the Vault (it holds deposits through
 * transitionDeposit), so it is handed in by the caller: flows/vault-screening.ts wires modules/sanctions, and every
 * sweep and recording pass requires one (there is no unscreened default).
 */
export type VaultScreening = {
  /** The groups that may be swept now; it holds flagged deposits itself (modules/sanctions/vault.ts). */
  admit(deps: AppDeps, chain: ActiveChain, groups: VaultGroup[]): Promise<VaultGroup[]>;
  /** In the transaction that drops deposits whose transfers vanished: closes their open holds. */
  closeDropped(client: pg.PoolClient, depositIds: string[], now: number): Promise<void>;
};
