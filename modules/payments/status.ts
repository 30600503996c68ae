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
 * Every transition the service makes. The spec's table plus the states it leaves open (docs/payments.md "Payment states"):
 * - pending | expired -> waiting_for_confirmation: the full amount is seen on-chain, not yet `blockConfirmations`
 *   deep; -> paid at depth, or back to pending if the transfer leaves the canonical chain.
 * - paid -> deploying_wallet: settlement sent on-chain; -> completed once the sweep is indexed.
 * - pending | expired -> withdraw_request -> withdrawing -> withdrawn: manual withdraw of a partial payment; the
 *   request is recorded first, the sender takes it when the chain and the settler are available.
 * - pending -> cancelled: cancelled by the merchant while nothing has reached the address (modules/payments/cancel.ts;
 *   funds that arrive later stay recoverable as unexpected funds).
 * - paid | deploying_wallet | withdraw_request -> sanctioned: a sender failed sanctions screening (before the sweep is
 *   reserved, and again just before it is signed); funds held at the address until the operator releases them
 *   (-> paid | withdraw_request) or rejects them (-> cancelled; no funds move).
 * - expired -> pending | paid: funds that arrive after expiry are never dropped.
 * - deploying_wallet -> paid: a sweep transaction that was dropped (never mined) is retried.
 * - paid | awaiting_gas | deploying_wallet -> pending: a counted deposit left the canonical chain (a re-org) before the
 *   sweep; `payment.reorged` tells the merchant (modules/payments/reorg.ts reopenAfterReorg).
 * - waiting_for_confirmation -> pending: the full amount left the canonical chain before it was counted; no event, it
 *   was never reported paid (reorg.ts unconfirmAfterReorg).
 * - withdraw_request | withdrawing -> pending: the wallet is empty when the settler comes to sweep it, or to sweep it
 *   again after a revert or a drop (a re-org took the partial deposit); no event (modules/settlement/send.ts
 *   reopenUnfunded).
 */
export const TRANSITIONS: Record<PaymentStatus, readonly PaymentStatus[]> = {
  pending: ["waiting_for_confirmation", "paid", "expired", "failed", "withdraw_request", "cancelled"],
  waiting_for_confirmation: ["paid", "pending"],
  paid: ["deploying_wallet", "awaiting_gas", "failed", "pending", "sanctioned"],
  awaiting_gas: ["deploying_wallet", "failed", "pending"],
  deploying_wallet: ["completed", "failed", "paid", "pending", "sanctioned"],
  withdraw_request: ["withdrawing", "pending", "sanctioned", "failed"],
  withdrawing: ["withdrawn", "pending", "failed"],
  expired: ["waiting_for_confirmation", "pending", "paid", "withdraw_request"],
  sanctioned: ["paid", "withdraw_request", "cancelled"],
  completed: [],
  failed: [],
  withdrawn: [],
  cancelled: [],
};

export function canTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  return TRANSITIONS[from].includes(to);
}
