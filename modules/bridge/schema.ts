import { sql } from "drizzle-orm";
import { index, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { statusEvents, ts, units } from "../../db/columns.js";
import { payments } from "../payments/schema.js";

// The bridge module's tables: only this module writes them (other modules read them through its index.ts).

/**
 * Cross-chain orders of payments (modules/bridge/orders.ts), one row per bridge order (the provider's orderId, lowercase hex).
 * quoted (create-tx answered for the payer page) -> created (the payer's transaction reported or seen: the 5-minute
 * fill window starts at `reported_at`) -> fulfilled (the recipient was paid on the destination) -> claimed_unlock;
 * or created -> cancel_sent (our authority's cancel transaction, stored before broadcast like every transaction)
 * -> cancelled (the escrow refunded to the payer on the source). `failed`: a cancel that reverted while the order
 * stayed unfilled (operator attention). Amounts in smallest units: `src_amount` of `src_token`, `take_amount` of
 * the payment's token (exact).
 */
export const bridgeOrders = pgTable(
  "bridge_orders",
  {
    id: text("id").primaryKey(),
    paymentId: uuid("payment_id")
      .notNull()
      .references(() => payments.id),
    srcChainId: integer("src_chain_id").notNull(),
    srcToken: text("src_token").notNull(),
    srcAmount: units("src_amount").notNull(),
    payer: text("payer").notNull(),
    dstChainId: integer("dst_chain_id").notNull(),
    dstToken: text("dst_token").notNull(),
    takeAmount: units("take_amount").notNull(),
    /**
     * What a cancel gives back on the source (DLN's `srcChainTokenOut`): the input token, or for a pre-swapped input the
     * reserve asset it became (usually USDC), in `refund_units`; plus the creation fee `refund_fee_units` in the native
     * coin. Recorded from the quote; null on orders quoted before it was kept.
     */
    refundToken: text("refund_token"),
    refundSymbol: text("refund_symbol"),
    refundDecimals: integer("refund_decimals"),
    refundUnits: units("refund_units"),
    refundFeeUnits: units("refund_fee_units"),
    /** Who the refund goes to: the cancel beneficiary of the cancel the service sent (the payer). */
    refundTo: text("refund_to"),
    status: text("status").notNull().default("quoted"),
    /** The provider's last answer (DLN: Created, Fulfilled, SentUnlock, ClaimedUnlock, SentOrderCancel, ClaimedOrderCancel...). */
    providerStatus: text("provider_status"),
    createTxHash: text("create_tx_hash"),
    /** When the order was known created on the source: the auto-cancel counts 5 minutes from here. */
    reportedAt: ts("reported_at"),
    /** Last time the provider was asked about this order: its status, or an unreported quote (modules/bridge/poll.ts). */
    checkedAt: ts("checked_at"),
    cancelTxHash: text("cancel_tx_hash"),
    cancelRawTx: text("cancel_raw_tx"),
    cancelNonce: integer("cancel_nonce"),
    /** signed | sent | mined | reverted | dropped (chains/tx-sender.ts outcomes). */
    cancelTxStatus: text("cancel_tx_status"),
    error: text("error"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    index("bridge_orders_payment_idx").on(t.paymentId, t.createdAt.desc()),
    // What the bridge-orders processor polls, and what holds a payment's expiry.
    index("bridge_orders_live_idx")
      .on(t.status, t.reportedAt)
      .where(sql`status IN ('created', 'fulfilled', 'cancel_sent')`),
  ],
);

/** Every status change of a bridge order, for audit (modules/bridge/transition.ts). */
export const bridgeOrderEvents = statusEvents("bridge_order_events", {
  column: "order_id",
  kind: "text",
  references: () => bridgeOrders.id,
});
