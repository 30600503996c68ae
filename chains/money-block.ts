import type { PublicClient } from "viem";
import type { Db } from "../db/client.js";
import { indexerProgress } from "../db/indexer-status.js";

/**
 * The block a read that decides money is made at (docs/real-chain.md, "Reads that decide money"): the node's head,
 * never below the block the indexer has indexed for the chain (what the service may already have acted on: a deposit
 * counted, a payment paid). Give it as `blockNumber` to getBalance, readContract, multicall or call, not "latest".
 *
 * Why: a lagging provider answers "latest" with an older state (a deposit not there yet, a sweep not yet done, an
 * oracle entry not yet set). Pinned to this number, it fails there ("header not found") and the RPC pool
 * (chains/rpc-pool.ts) asks another provider; when none has the block the read throws and the caller's pass retries.
 *
 * @example
 * const at = await moneyBlock(deps.db, client, chain.chainId);
 * const balance = await client.getBalance({ address, blockNumber: at });
 */
export async function moneyBlock(db: Db, client: PublicClient, chainId: number): Promise<bigint> {
  const [head, progress] = await Promise.all([client.getBlockNumber({ cacheTime: 0 }), indexerProgress(db)]);
  const indexed = progress?.find((p) => p.chainId === chainId)?.indexedBlock;
  return indexed !== undefined && BigInt(indexed) > head ? BigInt(indexed) : head;
}
