/** The 13 payment statuses of the spec. */
export const PAYMENT_STATUSES = [
  "pending",
  "paid",
  "completed",
  "failed",
  "expired",
  "cancelled",
  "withdrawing",
  "withdrawn",
  "awaiting_gas",
  "deploying_wallet",
  "withdraw_request",
  "waiting_for_confirmation",
  "sanctioned",
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * Every transition the service makes. The spec's table plus the states it leaves open:
 * - paid -> deploying_wallet: settlement sent on-chain; -> completed once the sweep is indexed.
 * - pending -> withdrawing -> withdrawn: manual withdraw of a partial payment.
 * - expired -> pending | paid: funds that arrive after expiry are never dropped.
 * - deploying_wallet -> paid: a sweep transaction that was dropped (never mined) is retried.
 * - paid | awaiting_gas | deploying_wallet -> pending: a counted deposit left the canonical chain (a re-org)
 *   before the sweep; `payment.reorged` tells the merchant (modules/payments/reorg.ts).
 */
export const TRANSITIONS: Record<PaymentStatus, readonly PaymentStatus[]> = {
  pending: ["paid", "expired", "failed", "withdrawing", "cancelled"],
  paid: ["deploying_wallet", "awaiting_gas", "failed", "pending"],
  awaiting_gas: ["deploying_wallet", "failed", "pending"],
  deploying_wallet: ["completed", "failed", "paid", "pending"],
  withdrawing: ["withdrawn", "pending", "failed"],
  expired: ["pending", "paid"],
  completed: [],
  failed: [],
  withdrawn: [],
  cancelled: [],
  withdraw_request: [],
  waiting_for_confirmation: [],
  sanctioned: [],
};

export function canTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  return TRANSITIONS[from].includes(to);
}
