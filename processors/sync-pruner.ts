import { pruneSyncStore } from "../modules/indexing/index.js";
import { defineProcessor } from "./runner.js";

/** Bounds Ponder's sync store: deletes final foreign Transfer logs (modules/indexing/prune-sync.ts). */
export function syncPruner() {
  return defineProcessor({
    name: "sync-pruner",
    intervalMs: (deps) => deps.config.SYNC_PRUNE_INTERVAL_MS,
    needsIndexer: true,
    async run(deps) {
      if (deps.config.SYNC_PRUNE_ENABLED) await pruneSyncStore(deps.db, { now: deps.now });
    },
  });
}
