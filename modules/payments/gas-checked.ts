import type pg from "pg";

/**
 * Remembers the last Gas Tank ledger entry a payment awaiting gas was checked against (settlement reserves it
 * again only after a newer entry: a top-up). In the caller's transaction.
 *
 * @example await markGasChecked(client, paymentId, "1042");
 */
export async function markGasChecked(client: pg.ClientBase, paymentId: string, ledgerEntryId: string | null): Promise<void> {
  await client.query(`UPDATE payments SET gas_checked_ledger_id = $2 WHERE id = $1`, [paymentId, ledgerEntryId]);
}
