import { withTransaction, type Db } from "../../db/client.js";
import { fmt } from "./serialize.js";
import { transition } from "./state-machine.js";
import type { PaymentRow } from "./types.js";

export type WithdrawResult =
  | { ok: true; data: { paymentId: string; status: "withdrawing"; receivedAmount: string } }
  | { ok: false; status: 404 | 409; error: string };

/**
 * Manual withdraw of a partial payment (pending or expired, something received, less than due):
 * `-> withdrawing`; the settler sweeps the wallet to the merchant with no fee, and
 * `payment.withdrawn` (with amountWithdrawn) follows once the sweep is indexed.
 */
export async function requestWithdraw(db: Db, merchantId: string, paymentId: string, now: number): Promise<WithdrawResult> {
  return withTransaction(db, async (client) => {
    const { rows } = await client.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1 AND merchant_id = $2 FOR UPDATE`, [paymentId, merchantId]);
    const p = rows[0];
    if (!p) return { ok: false, status: 404, error: "Payment not found" };
    const received = BigInt(p.received_units);
    if (!["pending", "expired"].includes(p.status) || received === 0n || received >= BigInt(p.due_units))
      return { ok: false, status: 409, error: "Payment has no partial payment to withdraw" };
    if (p.status === "expired") await transition(client, paymentId, { from: ["expired"], to: "pending", reason: "funds received after expiry", now });
    await transition(client, paymentId, { from: ["pending"], to: "withdrawing", reason: "manual withdraw by the merchant", now });
    return { ok: true, data: { paymentId, status: "withdrawing", receivedAmount: fmt(received, p.token_decimals) } };
  });
}
