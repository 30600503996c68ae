import type { AppDeps } from "../core/deps.js";
import { Conflict, Invalid, NotFound } from "../core/errors.js";
import { isUuid } from "../core/ids.js";
import { createPayment, publicPaymentView, type CreatedPayment, type PublicPaymentView } from "../modules/payments/index.js";
import { terminalTokens, type PosSession } from "../modules/terminals/index.js";

/**
 * A sale on a POS terminal: a payment created by the same function as POST /payments (so fees, prices, amount
 * checks and the watched address are identical), for the merchant of the terminal, settling to the terminal's
 * payout address, with orderId `POS-{TERMINALCODE}-{CASHIERCODE}-{Unix ms}` (which links the payment to the
 * terminal). The caller takes the merchant's per-minute creation budget first (the API's `payments.create`).
 * The description, which the payer page and webhooks show, is the terminal's name alone: the cashier is
 * named only by the orderId's code, for the merchant.
 */

export const NO_PAYOUT = "This terminal has no payout address yet: set one in the dashboard";
export const TOKEN_NOT_ACCEPTED = "This terminal does not accept that token";
export const SALE_NOT_FOUND = "Sale not found";

/** The most characters (code points, as POST /payments counts them) of a payment's description. */
const MAX_DESCRIPTION = 200;

/** A keypad amount as the API reads it: "12." is 12, ".5" is 0.5. */
function amountOf(v: unknown): string {
  const s = typeof v === "string" ? v.trim() : "";
  return (s.startsWith(".") ? `0${s}` : s).replace(/\.$/, "");
}

/**
 * Creates the payment of a sale of `input.amount` (a decimal string) in `input.token` (a `chainId:address` entry the
 * terminal accepts). Throws Conflict (no payout address), Invalid (token, amount) or what createPayment throws.
 *
 * @example
 * const { paymentId, url } = await createPosSale(deps, session, { amount: "12.50", token: "777177:0x5fbd…" });
 */
export async function createPosSale(
  deps: AppDeps,
  session: PosSession,
  input: { amount: unknown; token: unknown },
): Promise<CreatedPayment> {
  const { terminal, cashier } = session;
  if (!terminal.payoutAddress) throw new Conflict(NO_PAYOUT);
  const key = typeof input.token === "string" ? input.token.trim().toLowerCase() : "";
  const token = terminalTokens(deps.chains, terminal).find((t) => t.key === key);
  if (!token) throw new Invalid(TOKEN_NOT_ACCEPTED);
  return createPayment(
    deps,
    { merchantId: terminal.merchantId },
    {
      merchant: terminal.payoutAddress,
      chainId: token.chainId,
      token: token.address,
      amount: amountOf(input.amount),
      orderId: `POS-${terminal.code}-${cashier.code}-${deps.now()}`,
      // Cut by code points: a cut inside a surrogate pair would leave half a character.
      description: [...terminal.name].slice(0, MAX_DESCRIPTION).join(""),
    },
  );
}

/**
 * The payer's view of a sale of this terminal (the same view the payer page polls); throws NotFound for a payment
 * of another terminal.
 *
 * @example
 * const view = await posSaleView(deps, session, paymentId);
 */
export async function posSaleView(deps: AppDeps, session: PosSession, paymentId: string): Promise<PublicPaymentView> {
  if (!isUuid(paymentId)) throw new NotFound(SALE_NOT_FOUND);
  const { rows } = await deps.db.pool.query(`SELECT 1 FROM payments WHERE id = $1 AND merchant_id = $2 AND terminal_id = $3`, [
    paymentId,
    session.terminal.merchantId,
    session.terminal.id,
  ]);
  const view = rows.length ? await publicPaymentView(deps, paymentId) : null;
  if (!view) throw new NotFound(SALE_NOT_FOUND);
  return view;
}
