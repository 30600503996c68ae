import type { PayerStage, PublicPaymentView } from "../../modules/payments/index.js";
import { payerStatusText } from "../payer-status.js";

/**
 * What the payer page shows for a view: badge labels, the notice under the amount and the
 * countdown. Shared by the server render (template.ts) and the browser script (client.ts, bundled
 * with this file), so the page reads the same before and after its first poll.
 */

/** The badge while a partly paid link waits for the rest. */
const PARTIAL_LABEL = "Partly paid";

const isPartial = (v: PublicPaymentView) => /[1-9]/.test(v.receivedAmount);

/**
 * The badge: the payer label of the status (web/payer-status.ts; "Confirming (2 of 3)" while the full amount waits for
 * its confirmations), "Link expired" for an unpaid link past its expiry, "Partly paid" while the rest is awaited.
 */
export function stageLabel(v: PublicPaymentView, stage: PayerStage = v.stage): string {
  if (stage === "awaiting_payment" && isPartial(v)) return PARTIAL_LABEL;
  return payerStatusText(v, stage).label;
}

const MESSAGES = {
  redirecting: "Payment complete. Returning you to the merchant\u2026",
  completed: "Payment complete. Thank you! You can close this page.",
  partial: "Partial payment received. Send the remaining {remaining} to complete it.",
};

export type Notice = { kind: "ok" | "info" | "bad"; text: string; link?: string };

/** The stage at `now` (payer's clock corrected by serverTime): between polls an unpaid link can run out. */
export function stageAt(v: PublicPaymentView, now: number): PayerStage {
  return v.stage === "awaiting_payment" && v.expiresAt - now <= 0 && !isPartial(v) ? "expired" : v.stage;
}

/** The notice under the amount (the status's line in payer words), or null for an unpaid open link. */
export function stageNotice(v: PublicPaymentView, stage: PayerStage = v.stage): Notice | null {
  switch (stage) {
    case "completed":
      return v.redirectUrl ? { kind: "ok", text: MESSAGES.redirecting, link: v.redirectUrl } : { kind: "ok", text: MESSAGES.completed };
    case "processing":
      return { kind: "info", text: payerStatusText(v, stage).explanation };
    case "expired":
    case "closed":
      return { kind: "bad", text: payerStatusText(v, stage).explanation };
    default:
      return isPartial(v)
        ? { kind: "info", text: MESSAGES.partial.replace("{remaining}", `${v.remainingAmount} ${v.token.symbol}`) }
        : null;
  }
}

/** The confirmation depth for the progress bar, while the full amount waits for its confirmations. */
export function confirmProgress(v: PublicPaymentView, stage: PayerStage = v.stage): { count: number; required: number } | null {
  return stage === "processing" && v.confirmations ? v.confirmations : null;
}

/** The label above the merchant's business name: who receives the payment. */
export const PAY_TO = "Payment to";

export function formatCountdown(ms: number): string {
  if (ms <= 0) return "Expired";
  const s = Math.floor(ms / 1000);
  const days = Math.floor(s / 86400);
  const hms = [Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60), s % 60].map((n) => String(n).padStart(2, "0")).join(":");
  return days > 0 ? `${days}d ${hms}` : hms;
}

/** The "Expires in" cell: a countdown while payable; the cell is hidden in every other stage (showExpiry). */
export function countdownText(stage: PayerStage, msLeft: number): string {
  return stage === "awaiting_payment" ? formatCountdown(msLeft) : "";
}

/** The expiry and what remains matter only while the link can be paid: hidden once paid, expired or closed. */
export const showExpiry = (stage: PayerStage) => stage === "awaiting_payment";

/** What was received: while the link can be paid, and afterwards only when something counted (not "0" while confirming). */
export const showReceived = (v: PublicPaymentView, stage: PayerStage) => stage === "awaiting_payment" || isPartial(v);

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
