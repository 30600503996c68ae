import type { AppDeps } from "../core/deps.js";
import type { ActiveChain } from "../chains/runtime.js";
import { indexerProgress, type IndexerProgress } from "../db/indexer-status.js";
import { detectPayments } from "../modules/payments/detect.js";
import { defineProcessor } from "./runner.js";

/** The block confirmations count from: the one Ponder has indexed, or the node's head before Ponder publishes checkpoints. */
async function countedHead(deps: AppDeps, chain: ActiveChain, progress: IndexerProgress[] | null): Promise<bigint> {
  const indexed = progress?.find((p) => p.chainId === chain.chainId)?.indexedBlock;
  return indexed ? BigInt(indexed) : await deps.clients.get(chain.chainId)!.getBlockNumber({ cacheTime: 0 });
}

/**
 * Detects payments (modules/payments/detect.ts). Confirmations are counted against the block Ponder
 * has indexed, not the node's head: a transfer can only be summed once it is indexed anyway, and
 * this makes a pass cost one query and no RPC call. A chain is scanned again only when its indexed
 * block moved, so the detector can poll often (DETECTOR_INTERVAL_MS, default 200) and notice a
 * payment within a fraction of a block.
 */
export function detector() {
  const lastScanned = new Map<number, bigint>();
  return defineProcessor({
    name: "detector",
    needsIndexer: true,
    intervalMs: (deps) => deps.config.DETECTOR_INTERVAL_MS,
    async run(deps) {
      const progress = await indexerProgress(deps.db);
      for (const chain of deps.chains) {
        const latest = await countedHead(deps, chain, progress);
        if (lastScanned.get(chain.chainId) === latest) continue;
        await detectPayments(deps, chain, latest);
        lastScanned.set(chain.chainId, latest);
      }
    },
  });
}
