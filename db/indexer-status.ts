import type { Db } from "./client.js";

export type IndexerProgress = { chainId: number; chainName: string; indexedBlock: number; finalizedBlock: number; indexedAt: number };

// Ponder checkpoints are fixed-width digit strings: timestamp(10) chainId(16) blockNumber(16) ...
const blockOf = (checkpoint: string) => Number(checkpoint.slice(26, 42));
const timeOf = (checkpoint: string) => Number(checkpoint.slice(0, 10)) * 1000;

/** Indexer progress per chain from Ponder's `_ponder_checkpoint` (published in the views schema). Null until Ponder is ready. */
export async function indexerProgress(db: Db): Promise<IndexerProgress[] | null> {
  const c = db.views.checkpoint;
  try {
    const rows = await db.orm.select().from(c).orderBy(c.chainId);
    return rows.map((r) => ({
      chainId: r.chainId,
      chainName: r.chainName,
      indexedBlock: blockOf(r.latestCheckpoint),
      finalizedBlock: blockOf(r.finalizedCheckpoint),
      indexedAt: timeOf(r.latestCheckpoint),
    }));
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "42P01" || code === "3F000") return null; // views not created yet
    throw e;
  }
}
