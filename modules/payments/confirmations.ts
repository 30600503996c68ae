import type { Db } from "../../db/client.js";
import { indexerProgress } from "../../db/indexer-status.js";
import type { PaymentRow } from "./types.js";

/**
 * The confirmations shown for a payment waiting for them (`waiting_for_confirmation`), in one place. The payer page
 * (public-view.ts `confirmations.count`), the list and GraphQL (serialize.ts `transaction.confirmations`) and the
 * dashboard (which shows the list item's) all use waitingConfirmations, so they show the same number:
 * - from the block in which the seen deposits first added up to the due amount (`received_block_number`, written by
 *   the detector): with instalments, the newest one that completed it, not the first deposit;
 * - against the block the indexer has indexed on the payment's chain (indexedBlocks), which is what the detector
 *   counts against: the payment is `paid` at the pass where that count reaches `blockConfirmations`.
 */

/**
 * How many confirmations `block` has at indexed block `latest`: latest - block + 1, between 1 (it was seen) and
 * `required` (the payment's `blockConfirmations`). The detector's audit row ("full amount seen, n of N") uses it too.
 */
export function confirmationsOf(latest: bigint, block: string | bigint, required: number): number {
  const n = Number(latest - BigInt(block) + 1n);
  return Math.max(1, Math.min(required, n));
}

/**
 * The displayed count of a waiting payment at `indexedBlock` (the indexer's block on its chain): confirmationsOf the
 * block that completed the full amount. 1, the least a seen deposit has, when either block is unknown (no indexer
 * progress yet, or a row written before `received_block_number` was kept).
 */
export function waitingConfirmations(
  p: Pick<PaymentRow, "received_block_number" | "block_confirmations">,
  indexedBlock: bigint | undefined,
): number {
  return indexedBlock !== undefined && p.received_block_number
    ? confirmationsOf(indexedBlock, p.received_block_number, p.block_confirmations)
    : 1;
}

/**
 * The block the indexer has indexed on each chain of the payments that wait for their confirmations (one read of its
 * progress, none when no payment waits): the `indexedBlock` of waitingConfirmations. A chain it has no progress for
 * is left out.
 */
export async function indexedBlocks(db: Db, rows: Pick<PaymentRow, "status" | "chain_id">[]): Promise<Map<number, bigint>> {
  const out = new Map<number, bigint>();
  const chains = new Set(rows.filter((p) => p.status === "waiting_for_confirmation").map((p) => p.chain_id));
  if (!chains.size) return out;
  for (const x of (await indexerProgress(db)) ?? []) if (chains.has(x.chainId)) out.set(x.chainId, BigInt(x.indexedBlock));
  return out;
}
