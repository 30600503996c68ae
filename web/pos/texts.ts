import type { PayerStage, PublicPaymentView } from "../../modules/payments/index.js";
import { payerStatusText } from "../payer-status.js";

/**
 * What the POS sale screen says for a payment: the payer's label and line of its status (web/payer-status.ts, the
 * same as the payer page's, as the customer reads this screen too), shared by the server render (templates.tsx) and
 * the polling script (client.ts, bundled with this file), so the screen reads the same before and after a poll.
 */
type SaleView = Pick<PublicPaymentView, "status" | "stage" | "confirmations" | "receivedAmount" | "remainingAmount" | "token">;

/** The status pill: never a raw status name. */
export const saleLabel = (v: SaleView): string => payerStatusText(v, v.stage).label;

const PARTIAL = "Partial payment received: {remaining} still to pay.";
const START_OVER = "Start a new sale.";

/** The line under the status: "" while the sale is open and nothing has arrived. */
export function saleMessage(v: SaleView): string {
  switch (v.stage) {
    case "awaiting_payment":
      return /[1-9]/.test(v.receivedAmount) ? PARTIAL.replace("{remaining}", `${v.remainingAmount} ${v.token.symbol}`) : "";
    case "expired":
    case "closed":
      return `${payerStatusText(v, v.stage).explanation} ${START_OVER}`;
    default:
      return payerStatusText(v, v.stage).explanation;
  }
}

/** The confirmation depth for the progress bar, while the full amount waits for its confirmations. */
export const saleProgress = (v: SaleView) => (v.stage === "processing" && v.confirmations ? v.confirmations : null);

/** Stages after which the sale no longer changes: the screen stops polling. */
export const isFinalStage = (stage: PayerStage) => stage === "completed" || stage === "expired" || stage === "closed";
