import type { AppDeps } from "../../core/deps.js";
import { chainInfo, isNativeToken } from "../../chains/registry.js";
import { isUuid } from "../../core/ids.js";
import { indexedBlocks, waitingConfirmations } from "./confirmations.js";
import { fmt } from "./serialize.js";
import type { PaymentRow } from "./types.js";
import { redirectTarget } from "./verify-hash.js";

/**
 * What the payer page does with a status, in one place (server render and the polling script):
 * - `awaiting_payment`: show the address, QR and countdown (also a partially paid `pending`).
 * - `processing`: the payer's part is done; the service is settling (`paid`, `deploying_wallet`,
 *   `awaiting_gas`), or the full amount is on-chain and waits for its confirmations
 *   (`waiting_for_confirmation`: the view's `confirmations`). Keep polling.
 * - `completed`: settled to the merchant; redirect (if a redirectUrl) or show success.
 * - `expired`: the link expired with nothing received (also a `pending` payment past `expiresAt`
 *   with nothing received, before the expiry job has run; a partially paid one stays open).
 * - `closed`: it will not complete through this page (`failed`, `cancelled`, `sanctioned`,
 *   `withdraw_request`, `withdrawing`, `withdrawn`): the payer should contact the merchant.
 */
export type PayerStage = "awaiting_payment" | "processing" | "completed" | "expired" | "closed";

export function payerStage(status: string): PayerStage {
  switch (status) {
    case "pending":
      return "awaiting_payment";
    case "paid":
    case "deploying_wallet":
    case "awaiting_gas":
    case "waiting_for_confirmation":
      return "processing";
    case "completed":
      return "completed";
    case "expired":
      return "expired";
    default:
      return "closed";
  }
}

export type PublicPaymentView = {
  paymentId: string;
  /** Who is paid: the merchant's business name (as signed up; never its e-mail or id). "" when unknown. */
  merchantName: string;
  status: string;
  stage: PayerStage;
  chainId: number;
  chainName: string;
  token: { address: string; symbol: string; decimals: number };
  /** What the payer must send in all (the requested amount, plus the fees in payer-covers-fee mode). */
  amountDue: string;
  /** The amount the merchant requested. */
  amount: string;
  /** What counts (at least `blockConfirmations` deep), as the API's `receivedAmount`. */
  receivedAmount: string;
  /** max(0, amountDue - receivedAmount); "0" while `waiting_for_confirmation` (the full amount is on-chain). */
  remainingAmount: string;
  /**
   * Only while `waiting_for_confirmation`: how deep the block that completed the full amount is at the block the
   * indexer has indexed (`count`, 1 to `required`: "Confirming 2 of 3"; confirmations.ts waitingConfirmations, the
   * number the list's `transaction.confirmations` and the dashboard show), and the payment's `blockConfirmations`.
   */
  confirmations?: { count: number; required: number };
  recipientAddress: string;
  /** Unix ms. */
  expiresAt: number;
  /** Server clock (Unix ms) when the view was made, so the countdown does not depend on the payer's clock. */
  serverTime: number;
  description: string | null;
  orderId: string;
  /** EIP-681 URI for wallets, for what is still to pay (the due amount until something arrives). */
  paymentUri: string;
  /** The merchant's redirect with `service`, `success=true` and `hash`: only once `completed`. */
  redirectUrl: string | null;
};

/**
 * EIP-681: `ethereum:<token>@<chainId>/transfer?address=<recipient>&uint256=<units>` for an
 * ERC-20, `ethereum:<recipient>@<chainId>?value=<units>` for the native coin.
 */
export function eip681Uri(p: { chainId: number; tokenAddress: string; recipient: string; units: bigint }): string {
  if (isNativeToken(p.tokenAddress)) return `ethereum:${p.recipient}@${p.chainId}?value=${p.units}`;
  return `ethereum:${p.tokenAddress}@${p.chainId}/transfer?address=${p.recipient}&uint256=${p.units}`;
}

/** The redirect only for http(s) targets (validated at creation; checked again as it ends up in an href and location). */
function safeRedirect(secret: string, p: PaymentRow): string | null {
  try {
    const target = redirectTarget(secret, p);
    if (!target) return null;
    const protocol = new URL(target).protocol;
    return protocol === "https:" || protocol === "http:" ? target : null;
  } catch {
    return null; // an unparsable stored URL: show the success message instead of failing the page
  }
}

/**
 * `indexedBlock`: the block the indexer has indexed on the payment's chain, for the confirmations of a payment
 * waiting for them (without it they read 1, the least a seen deposit has).
 */
export function toPublicView(
  p: PaymentRow & { merchant_name?: string | null },
  secret: string,
  now: number,
  indexedBlock?: bigint,
): PublicPaymentView {
  const d = p.token_decimals;
  const due = BigInt(p.due_units);
  const received = BigInt(p.received_units);
  const waiting = p.status === "waiting_for_confirmation";
  // A payment accepted short under the merchant's underpayment tolerance (paid, or further on) asks for nothing more.
  const accepted = ["processing", "completed"].includes(payerStage(p.status));
  const remaining = received >= due || waiting || accepted ? 0n : due - received;
  const expiresAt = p.expires_at.getTime();
  // The expiry job runs every minute: between expiresAt and that run the link is already closed to the payer.
  const stage = p.status === "pending" && expiresAt <= now && received === 0n ? "expired" : payerStage(p.status);
  return {
    paymentId: p.id,
    merchantName: p.merchant_name ?? "",
    status: p.status,
    stage,
    chainId: p.chain_id,
    chainName: chainInfo(p.chain_id)?.name ?? `Chain ${p.chain_id}`,
    token: { address: p.token_address, symbol: p.token_symbol, decimals: d },
    amountDue: fmt(due, d),
    amount: fmt(p.amount_units, d),
    receivedAmount: fmt(received, d),
    remainingAmount: fmt(remaining, d),
    recipientAddress: p.recipient_address,
    expiresAt,
    serverTime: now,
    description: p.description,
    orderId: p.order_id,
    paymentUri: eip681Uri({
      chainId: p.chain_id,
      tokenAddress: p.token_address,
      recipient: p.recipient_address,
      units: remaining > 0n ? remaining : due,
    }),
    // Not at `paid`/`deploying_wallet`: the merchant's GET /payments/verify says `verified: true`
    // only once completed, so an earlier redirect would be rejected by a merchant following the spec.
    redirectUrl: stage === "completed" ? safeRedirect(secret, p) : null,
    ...(waiting
      ? {
          confirmations: { count: waitingConfirmations(p, indexedBlock), required: p.block_confirmations },
        }
      : {}),
  };
}

/** The payer's view of a payment, or null for an unknown (or malformed) id. */
export async function publicPaymentView(
  deps: Pick<AppDeps, "db" | "config" | "now">,
  paymentId: string,
): Promise<PublicPaymentView | null> {
  if (!isUuid(paymentId)) return null;
  // The merchant's business name rides along (merchants.name, NOT NULL): one round trip per poll.
  const { rows } = await deps.db.pool.query<PaymentRow & { merchant_name: string }>(
    `SELECT p.*, m.name AS merchant_name FROM payments p JOIN merchants m ON m.id = p.merchant_id WHERE p.id = $1`,
    [paymentId],
  );
  const p = rows[0];
  if (!p) return null;
  // Confirmations count against the block the indexer has indexed, as the detector counts them (confirmations.ts).
  const indexed = await indexedBlocks(deps.db, [p]);
  return toPublicView(p, deps.config.HASH_SECRET, deps.now(), indexed.get(p.chain_id));
}
