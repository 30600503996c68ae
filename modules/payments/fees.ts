import { mulDivCeil, ONE_USD18, pow10, unitsToUsd18Ceil, usd18ToMicrosCeil } from "../../core/money.js";

export { unitsToUsd18Ceil };

/**
 * Fees of a payment (spec "Fees"), pure and bigint-only.
 *
 * Components:
 * - platform fee: `platformFeeBps` of the requested amount, in token units (no price needed);
 *   zero under the free-fee promotion;
 * - processing fee: 0.10 USD, converted to token units;
 * - gas fee: the caller's gas estimate in USD (see `gasFeeUsd18`), converted to token units;
 * - agent fee: the referring agent's markup, `agentFeeBps` of the requested amount like the platform fee, and
 *   waived with it under the promotion (docs/agents.md).
 *
 * Rounding: every fee component is rounded UP to the next smallest unit, in the service's favour
 * (a fee is never under-charged by a fraction of a unit): platform fee = ceil(amount * bps / 10000),
 * USD -> token units = ceil(usd18 * 10^decimals / priceUsd18), gas USD = ceil(...), Gas Tank micros =
 * ceil(total USD / 10^12). The total is the sum of the rounded components, so
 * totalFee == platformFee + agentFee + processingFee + gasFee always holds.
 *
 * Modes:
 * - `gasTank`: the payer sends the amount, the merchant receives the amount, and the Gas Tank is
 *   debited `gasTankFeeMicros` = the USD value (USDT, 6 decimals) of processing + gas + platform + agent fee.
 *   The platform and agent fees are token amounts; they are charged to the Gas Tank at their USD value
 *   (units * price). The token-unit fee fields are still reported (list output `fees`).
 * - `gasless`: the payer sends the amount; the fees are deducted from it.
 * - `payerCoversFee`: the payer sends amount + fees; the merchant receives the amount.
 *
 * Very low-priced tokens can give fees above the amount (spec); in gasless mode
 * `merchantReceivesUnits` is then zero or negative and `feeExceedsAmount` is true. Nothing is
 * clamped: the caller decides (reject, or fall back to another mode).
 */

export type FeeMode = "gasTank" | "gasless" | "payerCoversFee";

/** Spec: processing fee 0.10 USD fixed. */
export const PROCESSING_FEE_USD18 = ONE_USD18 / 10n;
const BPS = 10_000n;

export type FeeInput = {
  /** Requested amount in the token's smallest units. */
  amountUnits: bigint;
  /** Token decimals. */
  decimals: number;
  /** Token price in USD, 18 decimals (stablecoins: ONE_USD18). Must be > 0. */
  priceUsd18: bigint;
  /** Merchant's platform fee in basis points (direct 100 = 1%, member 0, partner 25..100). */
  platformFeeBps: number;
  /** The referring agent's markup in basis points (0 without an agent). */
  agentFeeBps?: number;
  /** Free-fee promotion: the platform fee and the agent's markup are waived (processing and gas fees still apply). */
  promo: boolean;
  /** Estimated gas cost in USD, 18 decimals (see gasFeeUsd18). */
  gasFeeUsd18: bigint;
  mode: FeeMode;
  /** Override of the 0.10 USD processing fee (18 decimals); defaults to PROCESSING_FEE_USD18. */
  processingFeeUsd18?: bigint;
};

export type FeeBreakdown = {
  mode: FeeMode;
  /** Basis points actually applied (0 under the promotion). */
  platformFeeBps: number;
  /** Spec's `feePercentage`: applied platform fee in percent (100 bps -> 1, 25 -> 0.25, promo -> 0). */
  feePercentage: number;
  platformFeeUnits: bigint;
  /** Agent markup actually applied, in basis points (0 under the promotion or without an agent). */
  agentFeeBps: number;
  agentFeeUnits: bigint;
  processingFeeUnits: bigint;
  gasFeeUnits: bigint;
  totalFeeUnits: bigint;
  /** What the payer must send. */
  dueUnits: bigint;
  /** What the merchant's payout address receives (may be <= 0 in gasless mode, see feeExceedsAmount). */
  merchantReceivesUnits: bigint;
  /** Gas Tank debit in USDT micros (Gas Tank mode only; 0 otherwise). */
  gasTankFeeMicros: bigint;
  /** USD values (18 decimals) of the rounded components, for display and audit. */
  usd18: { platformFee: bigint; agentFee: bigint; processingFee: bigint; gasFee: bigint; totalFee: bigint };
  /** Fees are at least the requested amount (gasless then leaves the merchant nothing). */
  feeExceedsAmount: boolean;
};

/** USD (18 decimals) to token units at `priceUsd18`, rounded up. */
export function usd18ToUnitsCeil(usd18: bigint, decimals: number, priceUsd18: bigint): bigint {
  if (priceUsd18 <= 0n) throw new RangeError("price must be positive");
  return mulDivCeil(usd18, pow10(decimals), priceUsd18);
}

/**
 * Gas cost in USD (18 decimals): gasUnits * gasPriceWei (+ an OP-stack chain's L1 data fee) wei of an 18-decimal native
 * coin at nativePriceUsd18, rounded up.
 */
export function gasFeeUsd18(p: { gasUnits: bigint; gasPriceWei: bigint; nativePriceUsd18: bigint; l1FeeWei?: bigint }): bigint {
  const l1 = p.l1FeeWei ?? 0n;
  if (p.gasUnits < 0n || p.gasPriceWei < 0n || p.nativePriceUsd18 < 0n || l1 < 0n) throw new RangeError("gas inputs must be non-negative");
  // An OP-stack chain's L1 data fee is paid in its native coin on top of L2 gas (modules/pricing/l1-fee.ts).
  return mulDivCeil(p.gasUnits * p.gasPriceWei + l1, p.nativePriceUsd18, ONE_USD18);
}

export function computeFees(input: FeeInput): FeeBreakdown {
  const { amountUnits, decimals, priceUsd18, mode } = input;
  if (amountUnits < 0n) throw new RangeError("amount must be non-negative");
  if (priceUsd18 <= 0n) throw new RangeError("price must be positive");
  if (!Number.isInteger(input.platformFeeBps) || input.platformFeeBps < 0 || input.platformFeeBps > 10_000)
    throw new RangeError(`invalid platformFeeBps: ${input.platformFeeBps}`);
  const agentBps = input.agentFeeBps ?? 0;
  if (!Number.isInteger(agentBps) || agentBps < 0 || agentBps > 10_000) throw new RangeError(`invalid agentFeeBps: ${agentBps}`);
  if (input.gasFeeUsd18 < 0n) throw new RangeError("gas fee must be non-negative");
  const processingUsd18 = input.processingFeeUsd18 ?? PROCESSING_FEE_USD18;
  if (processingUsd18 < 0n) throw new RangeError("processing fee must be non-negative");
  if (mode !== "gasTank" && mode !== "gasless" && mode !== "payerCoversFee") throw new RangeError(`invalid fee mode: ${String(mode)}`);

  const bps = input.promo ? 0 : input.platformFeeBps;
  const platformFeeUnits = mulDivCeil(amountUnits, BigInt(bps), BPS);
  const agentFeeBps = input.promo ? 0 : agentBps;
  const agentFeeUnits = mulDivCeil(amountUnits, BigInt(agentFeeBps), BPS);
  const processingFeeUnits = usd18ToUnitsCeil(processingUsd18, decimals, priceUsd18);
  const gasFeeUnits = usd18ToUnitsCeil(input.gasFeeUsd18, decimals, priceUsd18);
  const totalFeeUnits = platformFeeUnits + agentFeeUnits + processingFeeUnits + gasFeeUnits;

  const platformUsd18 = unitsToUsd18Ceil(platformFeeUnits, decimals, priceUsd18);
  const agentUsd18 = unitsToUsd18Ceil(agentFeeUnits, decimals, priceUsd18);
  const usd18 = {
    platformFee: platformUsd18,
    agentFee: agentUsd18,
    processingFee: processingUsd18,
    gasFee: input.gasFeeUsd18,
    totalFee: platformUsd18 + agentUsd18 + processingUsd18 + input.gasFeeUsd18,
  };

  let dueUnits = amountUnits;
  let merchantReceivesUnits = amountUnits;
  let gasTankFeeMicros = 0n;
  if (mode === "gasless") merchantReceivesUnits = amountUnits - totalFeeUnits;
  else if (mode === "payerCoversFee") dueUnits = amountUnits + totalFeeUnits;
  else gasTankFeeMicros = usd18ToMicrosCeil(usd18.totalFee);

  return {
    mode,
    platformFeeBps: bps,
    feePercentage: bps / 100,
    platformFeeUnits,
    agentFeeBps,
    agentFeeUnits,
    processingFeeUnits,
    gasFeeUnits,
    totalFeeUnits,
    dueUnits,
    merchantReceivesUnits,
    gasTankFeeMicros,
    usd18,
    feeExceedsAmount: totalFeeUnits >= amountUnits,
  };
}

/** The spec's mode flags to a FeeMode (payer-covers-fee wins over gasless when both are set). */
export function feeModeOf(p: { gasless: boolean; payerCoversFee: boolean }): FeeMode {
  return p.payerCoversFee ? "payerCoversFee" : p.gasless ? "gasless" : "gasTank";
}
