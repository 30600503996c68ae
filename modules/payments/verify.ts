import { isUuid } from "../../core/ids.js";
import type { AppDeps } from "../../core/deps.js";
import { fmt } from "./serialize.js";
import type { PaymentRow } from "./types.js";
import { hashMatches, redirectHash } from "./verify-hash.js";


type Out = { status: 200 | 400 | 404; body: Record<string, unknown> };
const err = (status: 400 | 404, error: string): Out => ({ status, body: { valid: false, verified: false, error } });

/** GET /payments/verify: `valid` = the hash matches; `verified` = valid and completed. */
export async function verifyPayment(deps: AppDeps, id: string | undefined, hash: string | undefined): Promise<Out> {
  if (!id) return err(400, "Missing payment ID");
  if (!hash) return err(400, "Missing hash");
  if (!isUuid(id)) return err(404, "Payment not found");
  const { rows } = await deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [id]);
  const p = rows[0];
  if (!p) return err(404, "Payment not found");
  if (!hashMatches(redirectHash(deps.config.HASH_SECRET, p), hash)) return err(400, "Invalid hash");
  const completed = p.status === "completed";
  const payment: Record<string, unknown> = {
    paymentId: p.id,
    orderId: p.order_id,
    status: p.status,
    amount: fmt(p.amount_units, p.token_decimals),
    receivedAmount: fmt(p.received_units, p.token_decimals),
    token: p.token_address,
    chainId: p.chain_id,
    merchant: p.merchant_address,
    transactionHash: p.settlement_tx_hash ?? p.payment_tx_hash,
  };
  if (completed && p.completed_at) payment.completedAt = p.completed_at.getTime();
  return { status: 200, body: { valid: true, verified: completed, payment } };
}
