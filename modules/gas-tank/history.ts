import type pg from "pg";
import { Invalid } from "../../core/errors.js";

// Reading the Gas Tank ledger for the dashboard: its entries newest first, a page at a time, and what the
// settlements of a period cost (the runway's spend).

type Q = Pick<pg.Pool, "query">;

export type LedgerEntryView = {
  /** The entry's id (bigserial, as text): also the page cursor. */
  id: string;
  kind: string;
  /** Signed USDT micros (6 decimals). */
  amountMicros: bigint;
  paymentId: string | null;
  chainId: number | null;
  createdAt: Date;
};

/** Entries shown per page unless asked otherwise. */
export const LEDGER_PAGE = 25;

/**
 * The merchant's ledger entries, newest first, `limit` at a time; `before` is the `nextBefore` of the
 * previous page (entries with a smaller id). Throws Invalid for a `before` that is not an entry id.
 *
 * @example
 * const first = await ledgerPage(db, merchantId);
 * const second = first.nextBefore ? await ledgerPage(db, merchantId, { before: first.nextBefore }) : null;
 */
export async function ledgerPage(
  db: Q,
  merchantId: string,
  opts: { before?: string; limit?: number } = {},
): Promise<{ entries: LedgerEntryView[]; nextBefore: string | null }> {
  const limit = opts.limit ?? LEDGER_PAGE;
  // A ledger id is a bigserial: at most 2^63 - 1 (a larger cursor would fail in Postgres, not here).
  if (opts.before !== undefined && (!/^[1-9]\d{0,18}$/.test(opts.before) || BigInt(opts.before) > 2n ** 63n - 1n))
    throw new Invalid("Invalid page cursor");
  const { rows } = await db.query<{
    id: string;
    kind: string;
    amount_micros: string;
    payment_id: string | null;
    chain_id: number | null;
    created_at: Date;
  }>(
    // Ordered by the bigint column (the output column `id` is its text).
    `SELECT id::text, kind, amount_micros::text, payment_id, chain_id, created_at FROM ledger_entries
      WHERE merchant_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint) ORDER BY ledger_entries.id DESC LIMIT $3`,
    [merchantId, opts.before ?? null, limit + 1],
  );
  const page = rows.slice(0, limit).map((r) => ({
    id: r.id,
    kind: r.kind,
    amountMicros: BigInt(r.amount_micros),
    paymentId: r.payment_id,
    chainId: r.chain_id,
    createdAt: r.created_at,
  }));
  return { entries: page, nextBefore: rows.length > limit ? page.at(-1)!.id : null };
}

/**
 * What settlements, recoveries and Vault sweeps of custom tokens took from the tank since `since` (micros): fees net of their refunds. Deposits, re-org
 * reversals and adjustments are not spend. Negative when refunds exceed fees.
 */
export async function settlementSpendSince(db: Q, merchantId: string, since: Date): Promise<bigint> {
  const { rows } = await db.query<{ spent: string }>(
    `SELECT COALESCE(-sum(amount_micros), 0)::text AS spent FROM ledger_entries
      WHERE merchant_id = $1 AND kind IN ('settlement_fee', 'settlement_refund', 'settlement_gas', 'recovery_fee', 'recovery_refund', 'vault_sweep_fee', 'vault_sweep_refund')
        AND created_at >= $2`,
    [merchantId, since],
  );
  return BigInt(rows[0]!.spent);
}
