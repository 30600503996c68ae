import type { PayerStage } from "../../modules/payments/index.js";

/**
 * What the POS sale screen says for a payment's stage: shared by the server render (templates.tsx) and the
 * polling script (client.ts, bundled with this file), so the screen reads the same before and after a poll.
 */
export const SALE_LABEL: Record<PayerStage, string> = {
  awaiting_payment: "Waiting for payment",
  processing: "Received, confirming\u2026",
  completed: "Completed",
  expired: "Expired",
  closed: "Not paid",
};

/** The line under the status, or "" while the sale is open. */
export function saleMessage(stage: PayerStage, status: string): string {
  switch (stage) {
    case "processing":
      return "The payment arrived and is being confirmed. This screen updates by itself.";
    case "expired":
      return "The payment link expired before it was paid. Start a new sale.";
    case "closed":
      return `This payment cannot be completed (status: ${status}). Start a new sale.`;
    default:
      return "";
  }
}

/** Stages after which the sale no longer changes: the screen stops polling. */
export const isFinalStage = (stage: PayerStage) => stage === "completed" || stage === "expired" || stage === "closed";
