import { indexerProgress } from "../db/indexer-status.js";
import { recordVaultDeposits } from "../modules/vault/index.js";
import { vaultScreening } from "../flows/vault-screening.js";
import { defineProcessor } from "./runner.js";
import { wakeOnIndexerProgress } from "./wake-on-indexer.js";

/**
 * Records transfers to vault user addresses as deposits (modules/vault/detect-deposits.ts). Woken when Ponder
 * commits a block, like the payment detector; DETECTOR_INTERVAL_MS is the fallback poll.
 */
export function vaultDeposits() {
  const handled = new Map<number, bigint>();
  return defineProcessor({
    name: "vault-deposits",
    needsIndexer: true,
    intervalMs: (deps) => deps.config.DETECTOR_INTERVAL_MS,
    wake: wakeOnIndexerProgress(),
    async run(deps) {
      const progress = await indexerProgress(deps.db);
      for (const chain of deps.chains) {
        const p = progress?.find((x) => x.chainId === chain.chainId);
        if (!p) continue; // deposits come from indexed transfers only
        const latest = BigInt(p.indexedBlock);
        if (handled.get(chain.chainId) === latest) continue;
        await recordVaultDeposits(deps, chain, { latest, finalized: BigInt(p.finalizedBlock) }, vaultScreening);
        handled.set(chain.chainId, latest);
      }
    },
  });
}
