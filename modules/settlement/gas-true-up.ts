import type { TransactionReceipt } from "viem";
import { usd18ToMicrosCeil } from "../../core/money.js";
import { gasFeeUsd18 } from "../payments/index.js";

// A Gas Tank payment's fee is quoted at creation (its gas at the gas price of that moment) and debited when its
// settlement is reserved; the sweep may mine minutes later, at another price, perhaps as the replacement of a version
// stuck in a fee spike (chains/tx-sender.ts). When it completes, its gas is charged again at what the mined version
// cost: the quote's gas part is swapped for the payment's share of the mined gas at its effective price (plus its share
// of an OP-stack chain's L1 data fee), in USDT at the native coin's price then. The processing, platform and agent fees
// stay as quoted. Gasless and payer-covers-fee payments paid their fees in tokens at creation: nothing to true up.

/**
 * The extra micros (negative: to give back) that make a payment's Gas Tank charge its mined gas: the mined cost minus
 * the quoted gas, each rounded up to a micro like the quote.
 *
 * @example
 * // 60,000 gas of a two-payment sweep at 30 gwei, ETH at 2,000 USD, quoted 0.05 USD of gas:
 * gasTrueUpMicros({ quotedGasUsd18: 5n * 10n ** 16n, gasUsed: 120_000n, batch: 2, effectiveGasPrice: 30n * 10n ** 9n,
 *   l1Fee: null, nativePriceUsd18: 2000n * 10n ** 18n }) // 3_550_000n: 3.60 USD mined, 0.05 quoted
 */
export function gasTrueUpMicros(q: {
  quotedGasUsd18: bigint;
  gasUsed: bigint;
  batch: number;
  effectiveGasPrice: bigint;
  l1Fee: bigint | null;
  nativePriceUsd18: bigint;
}): bigint {
  const n = BigInt(Math.max(1, q.batch));
  const share = (x: bigint) => (x + n - 1n) / n;
  const mined = gasFeeUsd18({
    gasUnits: share(q.gasUsed),
    gasPriceWei: q.effectiveGasPrice,
    nativePriceUsd18: q.nativePriceUsd18,
    l1FeeWei: q.l1Fee === null ? 0n : share(q.l1Fee),
  });
  return usd18ToMicrosCeil(mined) - usd18ToMicrosCeil(q.quotedGasUsd18);
}

/**
 * The L1 data fee an OP-stack node reports in a receipt (`l1Fee`, hex on the wire; viem's OP-stack formatter makes it a
 * bigint), or null where the chain has none.
 */
export function l1FeeOf(receipt: TransactionReceipt): bigint | null {
  const raw = (receipt as { l1Fee?: unknown }).l1Fee;
  if (typeof raw === "bigint") return raw;
  if (typeof raw === "string" && /^0x[0-9a-f]+$/i.test(raw)) return BigInt(raw);
  return null;
}
