import type { AppDeps } from "../core/deps.js";
import * as bridge from "../modules/bridge/index.js";
import { extendPendingExpiry } from "../modules/payments/index.js";

// Cross-chain orders change their payment: an order placed gives a pending payment 15 more minutes (docs/bridge.md).
// The bridge module sits below payments, so what it does to a payment row is handed in here.

const withPayments = <D extends object>(deps: D): D & { extendPaymentExpiry: bridge.PaymentExpiry } => ({
  ...deps,
  extendPaymentExpiry: extendPendingExpiry,
});

/**
 * One pass of the bridge-orders processor: follows orders at the provider, cancels those left unfilled.
 * @example await runBridgeOrders(deps); // { adopted, moved, cancelled, … }
 */
export function runBridgeOrders(deps: AppDeps) {
  return bridge.runBridgeOrders(withPayments(deps));
}

/**
 * The payer reported their transaction (POST /payments/{id}/bridge/orders): its orders become `created` and the
 * payment, if pending, gets 15 more minutes.
 * @example await reportBridgeTx(deps, paymentId, "0x5c50…9e1f", take);
 */
export function reportBridgeTx(deps: Pick<AppDeps, "db" | "config" | "now">, paymentId: string, txHash: string, take: bridge.TakeToken) {
  return bridge.reportBridgeTx(withPayments(deps), paymentId, txHash, take);
}
