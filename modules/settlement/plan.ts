import type { PaymentRow } from "../payments/index.js";
import { totalFeeUnits } from "../payments/index.js";

/**
 * What a sweep of this payment's wallet takes as fee, in token units: the fees in gasless and
 * payer-covers-fee modes; nothing in Gas Tank mode (charged to the Gas Tank) or for a manual
 * withdrawal of a partial payment (requested or taken: `withdraw_request`, `withdrawing`).
 */
export function sweepFeeUnits(p: PaymentRow): bigint {
  if (p.status === "withdraw_request" || p.status === "withdrawing") return 0n;
  if (p.gasless || p.payer_covers_fee) return totalFeeUnits(p);
  return 0n;
}

/** Gas Tank mode: fees are paid in USDT from the merchant's Gas Tank. */
export function usesGasTank(p: PaymentRow): boolean {
  return !p.gasless && !p.payer_covers_fee;
}
