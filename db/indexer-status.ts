import type { Db } from "./client.js";

export type IndexerProgress = { chainId: number; chainName: string; indexedBlock: number; finalizedBlock: number; indexedAt: number };

// Ponder checkpoints are fixed-width digit strings: timestamp(10) chainId(16) blockNumber(16) ...
const blockOf = (checkpoint: string) => Number(checkpoint.slice(26, 42));
const timeOf = (checkpoint: string) => Number(checkpoint.slice(0, 10)) * 1000;

/** Indexer progress per chain from Ponder's `_ponder_checkpoint` (published in the views schema). Null until Ponder is ready. */
export async function indexerProgress(db: Db): Promise<IndexerProgress[] | null> {
  try {
    const { rows } = await db.pool.query(
      `SELECT chain_name, chain_id, latest_checkpoint, finalized_checkpoint FROM "${db.viewsSchema}"."_ponder_checkpoint" ORDER BY chain_id`,
    );
    return rows.map((r) => ({
      chainId: Number(r.chain_id),
      chainName: r.chain_name,
      indexedBlock: blockOf(r.latest_checkpoint),
      finalizedBlock: blockOf(r.finalized_checkpoint),
      indexedAt: timeOf(r.latest_checkpoint),
    }));
  } catch (e: any) {
    if (e?.code === "42P01" || e?.code === "3F000") return null; // views not created yet
    throw e;
  }
}
