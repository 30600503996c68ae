import { indexerProgress } from "../db/indexer-status.js";
import { detectIndexedBlock, detectLostDeposits, detectPayments } from "../modules/payments/index.js";
import { defineProcessor } from "./runner.js";
import { wakeOnIndexerProgress } from "./wake-on-indexer.js";

/**
 * Detects payments (modules/payments/detect.ts). Woken when Ponder commits a block (a NOTIFY from
 * its checkpoint table, db/indexer-status.ts), so a payment is seen as soon as its block is indexed;
 * DETECTOR_INTERVAL_MS is only the fallback poll for a lost notification. Confirmations are counted
 * against the block Ponder has indexed, not the node's head: a transfer can only be summed once it
 * is indexed anyway, and a pass then costs what the new blocks brought (detectIndexedBlock).
 */
export function detector() {
  const lastHead = new Map<number, bigint>();
  const handled = new Map<number, bigint>();
  return defineProcessor({
    name: "detector",
    needsIndexer: true,
    intervalMs: (deps) => deps.config.DETECTOR_INTERVAL_MS,
    wake: wakeOnIndexerProgress(),
    async run(deps) {
      const progress = await indexerProgress(deps.db);
      for (const chain of deps.chains) {
        const p = progress?.find((x) => x.chainId === chain.chainId);
        if (p) {
          const latest = BigInt(p.indexedBlock);
          if (handled.get(chain.chainId) === latest) continue; // woken for another chain, or twice for one block
          await detectIndexedBlock(deps, chain, { latest, finalized: BigInt(p.finalizedBlock) });
          handled.set(chain.chainId, latest);
          continue;
        }
        // A chain Ponder does not report yet: full scans against the node's head, once per new block.
        const head = await deps.clients.get(chain.chainId)!.getBlockNumber({ cacheTime: 0 });
        if (lastHead.get(chain.chainId) === head) continue;
        await detectLostDeposits(deps, chain, { latest: head, finalized: head - BigInt(chain.finalityBlocks) });
        await detectPayments(deps, chain, head);
        lastHead.set(chain.chainId, head);
      }
    },
  });
}
