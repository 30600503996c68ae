import type pg from "pg";
import { NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { PaymentRow } from "./types.js";

type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

/**
 * One payment of the merchant's, or NotFound (`Payment not found`) for a malformed, unknown or another merchant's id:
 * the lookup of every route that takes a payment id. `forUpdate` locks the row (with a transaction's client).
 *
 * @example
 * const p = await merchantPayment(deps.db.pool, merchant.id, paymentId);
 */
export async function merchantPayment(
  db: Queryable,
  merchantId: string,
  paymentId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<PaymentRow> {
  if (!isUuid(paymentId)) throw new NotFound("Payment not found");
  const lock = opts.forUpdate ? " FOR UPDATE" : "";
  const { rows } = await db.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1 AND merchant_id = $2${lock}`, [paymentId, merchantId]);
  const p = rows[0];
  if (!p) throw new NotFound("Payment not found");
  return p;
}
