import type pg from "pg";

/** What waits for settlement on one chain: transactions not yet mined, and paid payments not yet swept. */
export type ChainBacklog = {
  chainId: number;
  /** Nonces signed by our signers whose no version has mined yet. */
  pendingTransactions: number;
  /** When the first version of the oldest such nonce was signed (null: none). */
  oldestPendingAt: Date | null;
  /** A pending transaction needs more than the chain's fee cap to be replaced: it waits for the base fee to fall. */
  atFeeCap: boolean;
  /** Payments paid (or being swept) not yet completed; those waiting for their merchant's Gas Tank are not counted. */
  unsettledPayments: number;
  /** When the oldest of them was paid (null: none). */
  oldestPaidAt: Date | null;
};

/**
 * Per chain, what waits for the settler (GET /api/health, /metrics): the transaction sender's pending versions
 * (tx_versions) and paid payments not completed. Two aggregate queries over indexes (pending versions; payments by status).
 *
 * @example (await settlementBacklog(db.pool)).get(137)?.oldestPendingAt
 */
export async function settlementBacklog(db: Pick<pg.Pool, "query">): Promise<Map<number, ChainBacklog>> {
  const [txs, paid] = await Promise.all([
    db.query<{ chain_id: number; n: number; oldest: Date; at_cap: boolean }>(
      `SELECT chain_id, count(DISTINCT (signer, nonce))::int AS n, min(created_at) AS oldest, bool_or(at_fee_cap) AS at_cap
         FROM tx_versions WHERE outcome IS NULL GROUP BY chain_id`,
    ),
    db.query<{ chain_id: number; n: number; oldest: Date }>(
      `SELECT chain_id, count(*)::int AS n, min(coalesce(paid_at, updated_at)) AS oldest
         FROM payments WHERE status IN ('paid', 'deploying_wallet') GROUP BY chain_id`,
    ),
  ]);
  const out = new Map<number, ChainBacklog>();
  const of = (chainId: number) => {
    let b = out.get(chainId);
    if (!b)
      out.set(
        chainId,
        (b = { chainId, pendingTransactions: 0, oldestPendingAt: null, atFeeCap: false, unsettledPayments: 0, oldestPaidAt: null }),
      );
    return b;
  };
  for (const r of txs.rows) Object.assign(of(r.chain_id), { pendingTransactions: r.n, oldestPendingAt: r.oldest, atFeeCap: r.at_cap });
  for (const r of paid.rows) Object.assign(of(r.chain_id), { unsettledPayments: r.n, oldestPaidAt: r.oldest });
  return out;
}
