import type { PayerStage, PaymentStatus } from "../modules/payments/index.js";

/**
 * What a payer (or the cashier beside them) reads for a payment's status: a short label and one line in payer words.
 * Shared by the payer page (web/pay) and the POS sale screen (web/pos), server render and browser script alike (this
 * file is bundled into both), so no screen shows a raw status name such as `awaiting_gas`.
 * Every status of modules/payments/status.ts has its entry (web/payer-status.test.ts walks them all).
 */
export type PayerStatusText = { label: string; explanation: string };

const CLOSED_BY_MERCHANT = "Closed by the merchant";

export const PAYER_STATUS_TEXT: Record<PaymentStatus, PayerStatusText> = {
  pending: {
    label: "Awaiting payment",
    explanation: "Waiting for the payment: send the amount shown to the address shown before the link expires.",
  },
  waiting_for_confirmation: {
    label: "Confirming",
    explanation: "Your payment is on the blockchain and waiting for confirmations. Do not send it again; this updates by itself.",
  },
  paid: {
    label: "Payment received",
    explanation: "Payment received and confirmed. It is being passed on to the merchant; you don't need to do anything.",
  },
  deploying_wallet: {
    label: "Finalising",
    explanation: "Payment received. It is being transferred to the merchant, usually within a minute. You don't need to do anything.",
  },
  awaiting_gas: {
    label: "Received, finalising",
    explanation: "Payment received. The merchant is finalising it; this can take a few minutes. You don't need to do anything.",
  },
  completed: {
    label: "Paid",
    explanation: "Payment complete. Thank you!",
  },
  expired: {
    label: "Link expired",
    explanation: "This payment link expired before it was paid. Do not send funds to it; ask the merchant for a new link.",
  },
  cancelled: {
    label: "Cancelled by the merchant",
    explanation: "The merchant cancelled this payment. Do not send funds to it; ask the merchant for a new link.",
  },
  failed: {
    label: "Not completed",
    explanation: "This payment could not be completed. Please contact the merchant and quote the order number.",
  },
  sanctioned: {
    label: "On hold",
    explanation: "This payment is on hold for a compliance review. Please contact the merchant and quote the order number.",
  },
  withdraw_request: {
    label: CLOSED_BY_MERCHANT,
    explanation: "The merchant closed this payment and is collecting the part received. Please contact the merchant about the rest.",
  },
  withdrawing: {
    label: CLOSED_BY_MERCHANT,
    explanation: "The merchant closed this payment and is collecting the part received. Please contact the merchant about the rest.",
  },
  withdrawn: {
    label: CLOSED_BY_MERCHANT,
    explanation: "The merchant closed this payment and collected the part received. Please contact the merchant about the rest.",
  },
};

/** A status this build does not know (a newer server than the script): never its raw name. */
const UNKNOWN: PayerStatusText = {
  label: "In progress",
  explanation: "This payment is being handled. If it does not move on, please contact the merchant and quote the order number.",
};

/** The confirming label with its depth: "Confirming 2 of 3" (the page adds a progress bar). */
export const CONFIRMING_PROGRESS = "Confirming {count} of {required}";
/** The confirming line with its depth. */
export const CONFIRMING_EXPLANATION =
  "Your payment is on the blockchain and waiting for confirmations ({count} of {required}). Do not send it again; this updates by itself.";

/**
 * The text for what the payer sees: the stage decides first where it overrides the stored status (a `pending` link
 * past `expiresAt` reads as expired at once, before the expiry job runs), the status otherwise.
 */
export function payerStatusText(
  v: { status: string; confirmations?: { count: number; required: number } },
  stage?: PayerStage,
): PayerStatusText {
  if (stage === "expired") return PAYER_STATUS_TEXT.expired;
  const known = Object.prototype.hasOwnProperty.call(PAYER_STATUS_TEXT, v.status);
  const text = known ? PAYER_STATUS_TEXT[v.status as PaymentStatus] : UNKNOWN;
  if (v.status === "waiting_for_confirmation" && v.confirmations)
    return { label: fillCounts(CONFIRMING_PROGRESS, v.confirmations), explanation: fillCounts(CONFIRMING_EXPLANATION, v.confirmations) };
  return text;
}

function fillCounts(text: string, c: { count: number; required: number }): string {
  return text.replace("{count}", String(c.count)).replace("{required}", String(c.required));
}
