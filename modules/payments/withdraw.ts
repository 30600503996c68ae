import type { AppDeps } from "../../core/deps.js";
import { Conflict, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { withTransaction, type Db } from "../../db/client.js";
import { assertNoBridgeOrderInFlight } from "../bridge/index.js";
import { authenticate, type Caller } from "../merchants/index.js";
import { merchantPayment } from "./merchant-payment.js";
import { fmt } from "./serialize.js";
import { transition } from "./state-machine.js";
import { isPartialPayment } from "./tolerance.js";

/** `status` is the payment's stored status after the request, as GET /v1/payments shows it. */
export type Withdrawal = { paymentId: string; status: "withdraw_request"; receivedAmount: string };

/**
 * POST /v1/payments/{paymentId}/withdraw, GraphQL `withdrawPayment` and `cli payment withdraw`:
 * the caller, then the payment. Throws Unauthorized, NotFound or Conflict.
 *
 * @example
 * await withdrawPayment(deps, { apiKey }, paymentId); // { paymentId, status: "withdraw_request", receivedAmount: "0.4" }
 */
export async function withdrawPayment(deps: Pick<AppDeps, "db" | "now">, caller: Caller, paymentId: string): Promise<Withdrawal> {
  const merchant = await authenticate(deps, caller);
  if (!isUuid(paymentId)) throw new NotFound("Payment not found");
  return requestWithdraw(deps.db, merchant.id, paymentId, deps.now());
}

/**
 * Manual withdraw of a partial payment (pending or expired, something received, less than due less the payment's
 * underpayment tolerance: tolerance.ts isPartialPayment; one received within it is paid, or about to be, and settles):
 * `-> withdraw_request`, recorded whatever the chain, the settler or its wallet are doing. The settler takes the
 * request when it next runs (modules/settlement/send.ts): `withdraw_request -> withdrawing` in the transaction that
 * stores the signed sweep, which pays the wallet to the merchant with no fee; `payment.withdrawn` (with
 * amountWithdrawn) follows once the sweep is indexed. Refused (Conflict) while a cross-chain order for the rest is
 * being filled (spec: cancel is locked; modules/bridge/guard.ts).
 */
async function requestWithdraw(db: Db, merchantId: string, paymentId: string, now: number): Promise<Withdrawal> {
  return withTransaction(db, async (client) => {
    const p = await merchantPayment(client, merchantId, paymentId, { forUpdate: true });
    const received = BigInt(p.received_units);
    if (
      !["pending", "expired"].includes(p.status) ||
      !isPartialPayment(received, BigInt(p.due_units), BigInt(p.underpayment_tolerance_units))
    )
      throw new Conflict("Payment has no partial payment to withdraw");
    await assertNoBridgeOrderInFlight(client, paymentId);
    await transition(client, paymentId, {
      from: ["pending", "expired"],
      to: "withdraw_request",
      reason: "manual withdraw by the merchant",
      now,
    });
    return { paymentId, status: "withdraw_request", receivedAmount: fmt(received, p.token_decimals) };
  });
}
