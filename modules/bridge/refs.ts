import type pg from "pg";

import { formatAmount } from "../../core/money.js";

/**
 * The merchant's view of a payment's cross-chain order (list output and webhooks: `bridge`). `refund` (an extension):
 * once the order is being cancelled, what the payer gets back on the source: token, decimal amount, to whom.
 */
export type BridgeRef = {
  orderId: string;
  srcChainId: number;
  srcToken: string;
  status: string;
  refund?: { token: string; symbol: string; amount: string; to: string | null };
} | null;

type Row = {
  payment_id: string;
  id: string;
  src_chain_id: number;
  src_token: string;
  status: string;
  refund_token: string | null;
  refund_symbol: string | null;
  refund_decimals: number | null;
  refund_units: string | null;
  refund_to: string | null;
};

const toRef = (r: Row): BridgeRef => ({
  orderId: r.id,
  srcChainId: r.src_chain_id,
  srcToken: r.src_token,
  status: r.status,
  ...((r.status === "cancel_sent" || r.status === "cancelled") && r.refund_token && r.refund_units !== null && r.refund_decimals !== null
    ? {
        refund: {
          token: r.refund_token,
          symbol: r.refund_symbol ?? "",
          amount: formatAmount(BigInt(r.refund_units), r.refund_decimals),
          to: r.refund_to,
        },
      }
    : {}),
});

/**
 * The latest order a payer actually placed for each payment (quotes the payer never sent are not shown).
 * @example (await bridgeRefsOf(db, [id])).get(id) // { orderId: "0x…", srcChainId: 137, srcToken: "0x…", status: "fulfilled" }
 */
export async function bridgeRefsOf(db: Pick<pg.Pool, "query">, paymentIds: string[]): Promise<Map<string, BridgeRef>> {
  const out = new Map<string, BridgeRef>();
  if (!paymentIds.length) return out;
  const { rows } = await db.query<Row>(
    `SELECT DISTINCT ON (payment_id) payment_id, id, src_chain_id, src_token, status,
            refund_token, refund_symbol, refund_decimals, refund_units, refund_to
       FROM bridge_orders WHERE payment_id = ANY($1::uuid[]) AND status <> 'quoted'
      ORDER BY payment_id, reported_at DESC NULLS LAST, created_at DESC`,
    [paymentIds],
  );
  for (const r of rows) out.set(r.payment_id, toRef(r));
  return out;
}

/** bridgeRefsOf for one payment: its ref or null. */
export async function bridgeRefOf(db: Pick<pg.Pool, "query">, paymentId: string): Promise<BridgeRef> {
  return (await bridgeRefsOf(db, [paymentId])).get(paymentId) ?? null;
}
