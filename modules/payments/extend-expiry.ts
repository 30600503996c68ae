import type pg from "pg";

/**
 * Gives a pending payment `byMs` more before it expires (a cross-chain order was placed for it: the bridge module
 * asks through flows/bridge-orders.ts). In the caller's transaction, which holds the payment row; no-op otherwise.
 *
 * @example await extendPendingExpiry(client, paymentId, 15 * 60_000, Date.now());
 */
export async function extendPendingExpiry(client: pg.ClientBase, paymentId: string, byMs: number, now: number): Promise<void> {
  await client.query(
    `UPDATE payments SET expires_at = expires_at + $2 * interval '1 millisecond', updated_at = $3 WHERE id = $1 AND status = 'pending'`,
    [paymentId, byMs, new Date(now)],
  );
}
