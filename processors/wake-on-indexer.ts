import type { AppDeps } from "../core/deps.js";
import { watchIndexerProgress } from "../db/indexer-status.js";

/** A processor's `wake`: start the next pass as soon as Ponder commits a block (NOTIFY on its checkpoint). The runner's `log` names the processor. */
export function wakeOnIndexerProgress() {
  return (deps: AppDeps, wakeUp: () => void, log: (msg: string) => void) => {
    if (!deps.config.DATABASE_URL) return () => {};
    const listener = watchIndexerProgress({
      url: deps.config.DATABASE_URL,
      viewsSchema: deps.db.viewsSchema,
      onProgress: wakeUp,
      log,
    });
    return () => listener.close();
  };
}
