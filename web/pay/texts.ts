import type { PayerStage, PublicPaymentView } from "../../modules/payments/public-view.js";

/**
 * What the payer page shows for a view: badge labels, the notice under the amount and the
 * countdown. Shared by the server render (template.ts) and the browser script (client.ts, bundled
 * with this file), so the page reads the same before and after its first poll.
 */

export const STAGE_LABEL: Record<PayerStage, string> = {
  awaiting_payment: "Awaiting payment",
  processing: "Confirming",
  completed: "Paid",
  expired: "Expired",
  closed: "Closed",
};

const MESSAGES = {
  redirecting: "Payment complete. Returning you to the merchant\u2026",
  completed: "Payment complete. Thank you! You can close this page.",
  processing: "Payment received. It is being confirmed and settled; this page updates by itself.",
  expired: "This payment link has expired. Do not send funds to it; ask the merchant for a new link.",
  closed: "This payment can no longer be paid here (status: {status}). Please contact the merchant.",
  partial: "Partial payment received. Send the remaining {remaining} to complete it.",
};

export type Notice = { kind: "ok" | "info" | "bad"; text: string; link?: string };

const isPartial = (v: PublicPaymentView) => /[1-9]/.test(v.receivedAmount);

/** The stage at `now` (payer's clock corrected by serverTime): between polls an unpaid link can run out. */
export function stageAt(v: PublicPaymentView, now: number): PayerStage {
  return v.stage === "awaiting_payment" && v.expiresAt - now <= 0 && !isPartial(v) ? "expired" : v.stage;
}

/** The notice under the amount, or null for an unpaid open link. */
export function stageNotice(v: PublicPaymentView, stage: PayerStage = v.stage): Notice | null {
  switch (stage) {
    case "completed":
      return v.redirectUrl ? { kind: "ok", text: MESSAGES.redirecting, link: v.redirectUrl } : { kind: "ok", text: MESSAGES.completed };
    case "processing":
      return { kind: "info", text: MESSAGES.processing };
    case "expired":
      return { kind: "bad", text: MESSAGES.expired };
    case "closed":
      return { kind: "bad", text: MESSAGES.closed.replace("{status}", v.status) };
    default:
      return isPartial(v)
        ? { kind: "info", text: MESSAGES.partial.replace("{remaining}", `${v.remainingAmount} ${v.token.symbol}`) }
        : null;
  }
}

export function formatCountdown(ms: number): string {
  if (ms <= 0) return "Expired";
  const s = Math.floor(ms / 1000);
  const days = Math.floor(s / 86400);
  const hms = [Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60), s % 60].map((n) => String(n).padStart(2, "0")).join(":");
  return days > 0 ? `${days}d ${hms}` : hms;
}

/** The "Expires in" cell: a countdown while payable, "Expired", or a dash once it no longer applies. */
export function countdownText(stage: PayerStage, msLeft: number): string {
  return stage === "awaiting_payment" ? formatCountdown(msLeft) : stage === "expired" ? "Expired" : "\u2014";
}
