import type { PayerStage, PublicPaymentView } from "../../modules/payments/index.js";

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

/** The badge while the full amount waits for its confirmations (`waiting_for_confirmation`). */
const CONFIRMING_LABEL = "Confirming {count} of {required}";

/** The badge: the stage's label, with the depth reached while the full amount waits for its confirmations. */
export function stageLabel(v: PublicPaymentView, stage: PayerStage = v.stage): string {
  return stage === "processing" && v.confirmations ? fill(CONFIRMING_LABEL, v.confirmations) : STAGE_LABEL[stage];
}

const MESSAGES = {
  redirecting: "Payment complete. Returning you to the merchant\u2026",
  completed: "Payment complete. Thank you! You can close this page.",
  processing: "Payment received. It is being confirmed and settled; this page updates by itself.",
  confirming:
    "Your payment is on the blockchain and waiting for confirmations ({count} of {required}). Do not send it again; this page updates by itself.",
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
      return { kind: "info", text: v.confirmations ? fill(MESSAGES.confirming, v.confirmations) : MESSAGES.processing };
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

/** The stages of a payment through the bridge, in order (bridge-client.ts; `data-stage` of the bridge section). */
export const BRIDGE_STAGES = ["approving", "sending", "bridging", "delivered", "completed"] as const;
export type BridgeStage = (typeof BRIDGE_STAGES)[number];

/** The texts of the "Pay with another token or network" section (template.ts renders it hidden; bridge-client.ts runs it). */
export const BRIDGE_TEXT = {
  title: "Pay with another token or network",
  intro:
    "Connect a browser wallet to pay with a token you hold on another network. A bridge converts it and delivers exactly the amount due here.",
  noWallet: "No browser wallet found. Install a wallet extension, or pay with the address above.",
  connecting: "Connecting to {wallet}\u2026",
  solanaWallet: "{wallet} (Solana)",
  connected: "Connected {account} ({wallet})",
  scanning: "Reading your balances on {chain}\u2026",
  noBalance: "This wallet holds none of the supported tokens on another network.",
  pickSource: "Pay from",
  choose: "Choose a token\u2026",
  option: "{symbol} on {chain} (balance {balance})",
  quoting: "Getting a quote\u2026",
  youPay: "You pay",
  merchantGets: "Delivered to this payment",
  fees: "Bridge fees",
  feesIncluded: "{fees} {symbol}, network cost of {opex} {symbol} included",
  networkCost: "{opex} {symbol} network cost, included",
  protocolFee: "Protocol fee",
  eta: "Estimated time",
  etaValue: "about {seconds} s after your transaction",
  short: "Not enough {symbol}: you hold {balance}.",
  pay: "Approve and pay",
  payNative: "Pay",
  requoted: "The quote was refreshed: check the amounts and confirm again.",
  rejected: "You rejected the request in your wallet.",
  switchFailed: "Your wallet could not switch to {chain}. Add the network to your wallet and try again.",
  txFailed: "The transaction failed on {chain}. Nothing was paid to the bridge.",
  reportFailed: "Your order was sent but this page could not register it yet. Keep this page open; it tries again.",
  cancelling: "The bridge did not fill your order in time. It is being cancelled; {refund} go back to your wallet on {chain}.",
  cancelled: "The bridge did not fill your order. It was cancelled and {refund} were returned to your wallet on {chain}.",
  /** The refund of a cancel: DLN gives back the reserve asset a non-reserve input was swapped to, plus the creation fee. */
  refundAmount: "{amount} {symbol}",
  refundWithFee: "{amount} {symbol} and the {fee} {native} bridge fee",
  yourTokens: "your {symbol}",
  refundRow: "If not filled",
  refundValue: "you get back {amount} {symbol}",
  done: "Paid through the bridge: the merchant received the full amount.",
  failed: "The bridge order needs attention. Please contact the merchant with order {order}.",
  error: "Something went wrong: {error}",
} as const;

export const BRIDGE_STAGE_LABEL: Record<BridgeStage, string> = {
  approving: "Approve the token",
  sending: "Send the order",
  bridging: "Waiting for the bridge",
  delivered: "Delivered to the payment address",
  completed: "Payment completed",
};

/** A text with its `{name}` placeholders filled. */
export function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (m, k: string) => (k in values ? String(values[k]) : m));
}
