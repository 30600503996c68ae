import type { AppDeps } from "../../core/deps.js";
import { Invalid, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { fmt } from "./serialize.js";
import type { PaymentRow } from "./types.js";
import { hashMatches, redirectHash } from "./verify-hash.js";

export type Verification = { valid: true; verified: boolean; payment: Record<string, unknown> };

/**
 * GET /payments/verify: `valid` = the hash matches; `verified` = valid and completed.
 * Throws Invalid (missing id or hash, hash mismatch) or NotFound.
 */
export async function verifyPayment(deps: AppDeps, id: string | undefined, hash: string | undefined): Promise<Verification> {
  if (!id) throw new Invalid("Missing payment ID");
  if (!hash) throw new Invalid("Missing hash");
  if (!isUuid(id)) throw new NotFound("Payment not found");
  const { rows } = await deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [id]);
  const p = rows[0];
  if (!p) throw new NotFound("Payment not found");
  if (!hashMatches(redirectHash(deps.config.HASH_SECRET, p), hash)) throw new Invalid("Invalid hash");
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
  return { valid: true, verified: completed, payment };
}
