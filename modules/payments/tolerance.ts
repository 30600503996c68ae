/**
 * Underpayment tolerance (docs/payments.md "Underpayment tolerance"), pure and bigint-only. Exchanges deduct their withdrawal
 * fee from what the payer sends, so payments often arrive a little short; a merchant may accept them:
 * - `bps`: a share of the amount due, in basis points (0..MAX_TOLERANCE_BPS), rounded DOWN to the smallest unit, so
 *   no more shortfall is ever accepted than configured;
 * - `absoluteUnits`: a fixed amount of the payment's token (0: none).
 * Either one accepts a shortfall: the tolerance is the larger of the two. It is capped so that what must arrive still
 * pays the fees the sweep takes from the wallet (gasless and payer-covers-fee modes) plus at least one unit for the
 * merchant: a payment whose received amount cannot cover its fees is never accepted by tolerance. Gas Tank mode takes
 * no fee from the wallet: at least one unit must arrive.
 *
 * Computed once, when the payment is created, and kept on it (`underpayment_tolerance_units`): a change of the setting
 * afterwards does not change what a payment already shown to a payer accepts. Default 0: the spec's behaviour.
 */
import { MAX_TOLERANCE_BPS } from "../merchants/index.js";

const BPS = 10_000n;

export type ToleranceInput = {
  /** What the payer must send, smallest units. */
  dueUnits: bigint;
  /** The merchant's tolerance in basis points of `dueUnits` (0..MAX_TOLERANCE_BPS). */
  bps: number;
  /** The merchant's absolute tolerance in the payment's token, smallest units (0: none). */
  absoluteUnits: bigint;
  /** The fees the sweep takes from the payment's wallet (0 in Gas Tank mode). */
  walletFeeUnits: bigint;
};

/**
 * The shortfall a payment may arrive with and still be paid in full, in smallest units.
 *
 * @example
 * underpaymentToleranceUnits({ dueUnits: 10_000_000n, bps: 50, absoluteUnits: 0n, walletFeeUnits: 0n }); // 50_000n (0.05 USDT)
 */
export function underpaymentToleranceUnits(input: ToleranceInput): bigint {
  const { dueUnits, bps, absoluteUnits, walletFeeUnits } = input;
  if (!Number.isInteger(bps) || bps < 0 || bps > MAX_TOLERANCE_BPS) throw new RangeError(`invalid tolerance bps: ${bps}`);
  if (dueUnits < 0n || absoluteUnits < 0n || walletFeeUnits < 0n) throw new RangeError("tolerance inputs must be non-negative");
  const byShare = (dueUnits * BigInt(bps)) / BPS; // bigint division rounds down
  const wanted = byShare > absoluteUnits ? byShare : absoluteUnits;
  const ceiling = dueUnits - walletFeeUnits - 1n;
  if (ceiling <= 0n) return 0n;
  return wanted < ceiling ? wanted : ceiling;
}

/** The least a payment must receive to count as paid: the amount due less its tolerance. */
export function paidThreshold(dueUnits: bigint, toleranceUnits: bigint): bigint {
  return dueUnits - toleranceUnits;
}

/**
 * Whether a payment holds a partial payment the merchant may withdraw (withdraw.ts; the dashboard's `canWithdraw`,
 * detail.ts): something received, less than `paidThreshold`. One received within its tolerance is not partial: it is
 * paid like one received in full, or about to be (a pending or expired row holding it waits for the detector's next
 * pass), and what it holds goes to settlement, never to a withdrawal. The status (`pending`, `expired`) is the caller's.
 */
export function isPartialPayment(receivedUnits: bigint, dueUnits: bigint, toleranceUnits: bigint): boolean {
  return receivedUnits > 0n && receivedUnits < paidThreshold(dueUnits, toleranceUnits);
}

/** What a payment counted as paid lacks of the amount due (its `underpayment`); 0 when paid in full or more. */
export function shortfallUnits(receivedUnits: bigint, dueUnits: bigint): bigint {
  return receivedUnits < dueUnits ? dueUnits - receivedUnits : 0n;
}
