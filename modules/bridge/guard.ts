import type pg from "pg";
import { Conflict } from "../../core/errors.js";
import { IN_FLIGHT_SQL } from "./transition.js";

export const ORDER_IN_FLIGHT = "Payment has a cross-chain order being filled";

/**
 * Whether a payment has a cross-chain order in flight (transition.ts IN_FLIGHT_SQL): the payer's funds are on their
 * way to the recipient, or may still be, so the payment must stay open (spec: "cancel is locked while the swap is being
 * filled"). Call it with the payment row locked, as the code that creates orders locks it (orders.ts).
 * @example if (await bridgeOrderInFlight(client, paymentId)) return null; // the expiry job skips it
 */
export async function bridgeOrderInFlight(db: Pick<pg.PoolClient, "query">, paymentId: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM bridge_orders WHERE payment_id = $1 AND ${IN_FLIGHT_SQL} LIMIT 1`, [paymentId]);
  return rows.length > 0;
}

/**
 * Throws Conflict `Payment has a cross-chain order being filled` while an order is in flight: for any operation that
 * would close a pending payment (cancel, withdraw) before the swap has landed or been refunded.
 * @example await assertNoBridgeOrderInFlight(client, paymentId);
 */
export async function assertNoBridgeOrderInFlight(db: Pick<pg.PoolClient, "query">, paymentId: string): Promise<void> {
  if (await bridgeOrderInFlight(db, paymentId)) throw new Conflict(ORDER_IN_FLIGHT);
}
