import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { Invalid, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { fmt } from "./serialize.js";
import type { PaymentRow } from "./types.js";
import { hashMatches, redirectHash } from "./verify-hash.js";

export type Verification = { valid: true; verified: boolean; payment: Record<string, unknown> };

/** GET /payments/verify `?id&hash`: the redirect's `service` and `hash` parameters, checked in that order. */
export const verifyQuery = z.object({
  id: z.string({ error: "Missing payment ID" }).min(1, "Missing payment ID"),
  hash: z.string({ error: "Missing hash" }).min(1, "Missing hash"),
});

/**
 * GET /payments/verify: `valid` = the hash matches; `verified` = valid and completed.
 * Throws Invalid (missing id or hash, hash mismatch) or NotFound.
 */
export async function verifyPayment(deps: AppDeps, rawId: string | undefined, rawHash: string | undefined): Promise<Verification> {
  const parsed = verifyQuery.safeParse({ id: rawId, hash: rawHash });
  if (!parsed.success) throw new Invalid(parsed.error.issues[0]!.message);
  const { id, hash } = parsed.data;
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
