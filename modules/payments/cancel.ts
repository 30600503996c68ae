import type pg from "pg";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { withTransaction } from "../../db/client.js";
import { bridgeOrderInFlight, ORDER_IN_FLIGHT } from "../bridge/index.js";
import { authenticate, type Caller } from "../merchants/index.js";
import { addressHasFunds } from "./address-has-funds.js";
import { merchantPayment } from "./merchant-payment.js";
import { transition } from "./state-machine.js";
import type { PaymentRow } from "./types.js";

export type Cancellation = { paymentId: string; status: "cancelled" };

/** 409 when something was counted (`received_units` > 0): the funds belong to the merchant, and withdraw is the way to take them. */
export const HAS_FUNDS = "Payment has received funds: withdraw instead";
/**
 * 409 when nothing is counted yet but something has reached the address (address-has-funds.ts): a deposit not yet
 * `blockConfirmations` deep, one the detector has not counted yet, another token, or a native balance.
 */
export const HAS_UNCOUNTED_FUNDS = "Payment address has received funds not counted yet";
/** 409 for any status but `pending`. */
export const cannotCancelIn = (status: string) => `Payment cannot be cancelled in status ${status}`;
/** The audit row's reason and the `reason` of `payment.cancelled`. */
export const CANCELLED_BY_MERCHANT = "cancelled by the merchant";

type Deps = Pick<AppDeps, "db" | "now" | "clients">;

/**
 * Why the payment cannot be cancelled now (the 409's message), or null when it can. These are the rules of
 * cancelPayment, which runs them on the locked row, and of the dashboard's `canCancel` (detail.ts), which runs them
 * on a plain read. In order:
 * - the status is not `pending`;
 * - something was counted;
 * - a cross-chain order is in flight (modules/bridge/guard.ts);
 * - anything at all reached the address (addressHasFunds, the rule expire.ts uses).
 */
export async function cancelRefusal(
  deps: Pick<Deps, "db" | "clients">,
  db: Pick<pg.PoolClient, "query">,
  p: PaymentRow,
): Promise<string | null> {
  if (p.status !== "pending") return cannotCancelIn(p.status);
  if (BigInt(p.received_units) > 0n) return HAS_FUNDS;
  if (await bridgeOrderInFlight(db, p.id)) return ORDER_IN_FLIGHT;
  if (await addressHasFunds(deps, db, p)) return HAS_UNCOUNTED_FUNDS;
  return null;
}

/**
 * POST /v1/payments/{paymentId}/cancel, GraphQL `cancelPayment` and `cli payment cancel`. Authenticates the caller,
 * then looks up the payment.
 *
 * A `pending` payment to whose address nothing has arrived becomes `cancelled` (final). `payment.cancelled` is
 * written in the same transaction: an extension event, with `reason` added to the common fields.
 *
 * Throws:
 * - Unauthorized;
 * - NotFound (`Payment not found`, also for another merchant's payment);
 * - Conflict (cancelRefusal) when funds were counted (HAS_FUNDS), when anything arrived that is not counted yet
 *   (HAS_UNCOUNTED_FUNDS), while a cross-chain order is being filled, or in any other status (cannotCancelIn).
 *
 * Every rule is checked with the payment row locked, in the transaction that makes the change. The detector reads
 * the sums without the lock, then takes it in transition() (or its UPDATE). So a cancel that takes the lock first
 * wins only when no transfer to the address was indexed yet. A deposit indexed after that commit finds the payment
 * cancelled: the detector leaves it alone.
 *
 * The deposit address stays registered (modules/addresses: nothing unregisters it). Funds sent after the cancel are
 * indexed, listed in `unexpectedFunds` (a cancelled payment is final: unexpected-funds.ts) and recoverable to the
 * payout (recover.ts).
 *
 * @example
 * await cancelPayment(deps, { apiKey }, paymentId); // { paymentId, status: "cancelled" }
 */
export async function cancelPayment(deps: Deps, caller: Caller, paymentId: string): Promise<Cancellation> {
  const merchant = await authenticate(deps, caller);
  if (!isUuid(paymentId)) throw new NotFound("Payment not found");
  return withTransaction(deps.db, async (client) => {
    // The row is locked first, as the detector's and withdraw's writes lock it: what a detection pass counted, and
    // every transfer indexed, before this lock is seen here.
    const p = await merchantPayment(client, merchant.id, paymentId, { forUpdate: true });
    const refusal = await cancelRefusal(deps, client, p);
    if (refusal) throw new Conflict(refusal);
    const now = deps.now();
    const done = await transition(client, paymentId, {
      from: ["pending"],
      to: "cancelled",
      guard: (row) => BigInt(row.received_units) === 0n,
      reason: CANCELLED_BY_MERCHANT,
      event: { name: "payment.cancelled", extra: { reason: CANCELLED_BY_MERCHANT } },
      now,
    });
    if (!done) throw new Conflict(cannotCancelIn(p.status)); // unreachable: the row is locked and was checked
    return { paymentId, status: "cancelled" };
  });
}
