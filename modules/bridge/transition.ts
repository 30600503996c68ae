import { and, eq, inArray, or, type SQL } from "drizzle-orm";
import type pg from "pg";
import { bridgeOrders } from "./schema.js";

/** Bridge order statuses (schema.ts bridgeOrders). */
export const BRIDGE_ORDER_STATUSES = ["quoted", "created", "fulfilled", "claimed_unlock", "cancel_sent", "cancelled", "failed"] as const;
export type BridgeOrderStatus = (typeof BRIDGE_ORDER_STATUSES)[number];

/**
 * The moves an order makes. Beyond the straight line (quoted -> created -> fulfilled -> claimed_unlock;
 * created -> cancel_sent -> cancelled), a poll may find the provider further on than we last saw (quoted or created
 * straight to fulfilled or claimed_unlock), a cancel may lose the race with a fill (cancel_sent -> fulfilled), and a
 * dropped cancel transaction sends the order back to created to be cancelled again.
 */
export const ORDER_TRANSITIONS: Record<BridgeOrderStatus, readonly BridgeOrderStatus[]> = {
  quoted: ["created", "fulfilled", "claimed_unlock", "cancel_sent", "cancelled"],
  created: ["fulfilled", "claimed_unlock", "cancel_sent", "cancelled"],
  fulfilled: ["claimed_unlock"],
  cancel_sent: ["cancelled", "fulfilled", "claimed_unlock", "created", "failed"],
  claimed_unlock: [],
  cancelled: [],
  // Our cancels kept reverting: still fillable (or cancellable by the operator) at the provider, so still followed.
  failed: ["fulfilled", "claimed_unlock", "cancel_sent", "cancelled"],
};

/**
 * Orders that hold the payment open: the payer's funds are on their way to the recipient (or may still be): created,
 * fulfilled, failed (our cancels kept reverting: it may still be filled), and cancel_sent while our cancel
 * transaction is not mined yet (a fill may still win that race). Once the cancel is mined the order can no longer
 * be filled and the lock is released (spec: "auto-cancelled, cancel lock released"). An SQL condition on
 * `bridge_orders` (qualified, for correlated subqueries).
 */
export const IN_FLIGHT_SQL = `(bridge_orders.status IN ('created', 'fulfilled', 'failed')
  OR (bridge_orders.status = 'cancel_sent' AND bridge_orders.cancel_tx_status IN ('signed', 'sent')))`;
/** IN_FLIGHT_SQL as a typed condition on `bridgeOrders`, for other modules' queries (no SQL text leaves the module). */
export const orderInFlight = (): SQL =>
  or(
    inArray(bridgeOrders.status, ["created", "fulfilled", "failed"]),
    and(eq(bridgeOrders.status, "cancel_sent"), inArray(bridgeOrders.cancelTxStatus, ["signed", "sent"])),
  )!;
/** Orders the processor follows at the provider. */
export const LIVE: readonly BridgeOrderStatus[] = ["created", "fulfilled", "cancel_sent", "failed"];

/** A `bridge_orders` row as pg returns it (numeric columns as strings). */
export type BridgeOrderRow = {
  id: string;
  payment_id: string;
  src_chain_id: number;
  src_token: string;
  src_amount: string;
  payer: string;
  dst_chain_id: number;
  dst_token: string;
  take_amount: string;
  refund_token: string | null;
  refund_symbol: string | null;
  refund_decimals: number | null;
  refund_units: string | null;
  refund_fee_units: string | null;
  refund_to: string | null;
  status: BridgeOrderStatus;
  provider_status: string | null;
  create_tx_hash: string | null;
  reported_at: Date | null;
  checked_at: Date | null;
  cancel_tx_hash: string | null;
  cancel_raw_tx: string | null;
  cancel_nonce: number | null;
  cancel_tx_status: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
};

export type OrderTransition = {
  to: BridgeOrderStatus;
  /** Only from one of these (the caller's view of the current status). */
  from: readonly BridgeOrderStatus[];
  reason: string;
  /** Column updates applied with the status change (snake_case column -> value). */
  set?: Record<string, unknown>;
  now: number;
};

/**
 * The one place a bridge order changes status: inside the caller's transaction, locks the row, checks the move,
 * writes the change and its `bridge_order_events` row together. Null (nothing changed) when the order is not in
 * one of `from`, so a repeated step is a no-op.
 * @example
 * await withTransaction(deps.db, (c) => transitionOrder(c, orderId, { from: ["cancel_sent"], to: "cancelled", reason: "ClaimedOrderCancel", now }));
 */
export async function transitionOrder(client: pg.PoolClient, orderId: string, t: OrderTransition): Promise<BridgeOrderRow | null> {
  const { rows } = await client.query<BridgeOrderRow>(`SELECT * FROM bridge_orders WHERE id = $1 FOR UPDATE`, [orderId]);
  const current = rows[0];
  if (!current || !t.from.includes(current.status)) return null;
  if (!ORDER_TRANSITIONS[current.status].includes(t.to)) throw new Error(`illegal bridge order transition ${current.status} -> ${t.to}`);
  const set: Record<string, unknown> = { ...t.set, status: t.to, updated_at: new Date(t.now) };
  const cols = Object.keys(set);
  const { rows: updated } = await client.query<BridgeOrderRow>(
    `UPDATE bridge_orders SET ${cols.map((c, i) => `"${c}" = $${i + 2}`).join(", ")} WHERE id = $1 RETURNING *`,
    [orderId, ...cols.map((c) => set[c])],
  );
  const data = t.set ? Object.fromEntries(Object.entries(t.set).filter(([k]) => k !== "cancel_raw_tx")) : null;
  await client.query(
    `INSERT INTO bridge_order_events (order_id, from_status, to_status, reason, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
    [orderId, current.status, t.to, t.reason, data ? JSON.stringify(data) : null, new Date(t.now)],
  );
  return updated[0]!;
}
