import { parseGwei, type PublicClient } from "viem";
import type { FeeRule } from "./registry.js";

// How the transaction sender prices a transaction and its replacements, by the chain's fee rule (`type`):
// - eip1559: type-2 transactions. Geth-style pools accept a replacement of a pending nonce only with both fees at least
//   10% higher; the base fee may rise 12.5% a block.
// - legacy (a chain without EIP-1559): type-0 transactions with one `gasPrice`, the node's `eth_gasPrice`; a replacement
//   needs a `gasPrice` at least 10% higher (geth's price bump).

/**
 * The fees of one signed version. A legacy version's `gasPrice` is both fields (it is what it may pay per gas and, with
 * no base fee taken, what it offers the block's producer): tx_versions keeps it in both columns, and the rules below
 * read `maxFeePerGas` as its `gasPrice`.
 */
export type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
/**
 * What the chain asks now: the latest block's base fee (0 on a chain without one), the node's suggested tip (EIP-1559;
 * 0 on a legacy chain), the head, and on a legacy chain the node's `eth_gasPrice`.
 */
export type Market = { baseFee: bigint; tip: bigint; head: bigint; gasPrice?: bigint };

const max = (...xs: bigint[]) => xs.reduce((a, b) => (b > a ? b : a));
const min = (a: bigint, b: bigint) => (a < b ? a : b);
/** Up by at least 10% (rounded up), what a pool needs to take a replacement. */
export const bump = (x: bigint) => (x * 11n + 9n) / 10n;
/** A gwei amount of the registry or the environment, exactly (`parseGwei` of its decimal text). */
export const gweiOf = (n: number) => parseGwei(String(n));
/** A legacy version's fees: its `gasPrice` in both fields (see Fees). */
export const legacyFees = (gasPrice: bigint): Fees => ({ maxFeePerGas: gasPrice, maxPriorityFeePerGas: gasPrice });

/**
 * The base fee, tip and head now; on a legacy chain the node's gas price instead of a tip (a node without EIP-1559 has
 * no `eth_maxPriorityFeePerGas` to ask, and its blocks no base fee).
 */
export async function marketOf(client: PublicClient, rule: Pick<FeeRule, "type">): Promise<Market> {
  if (rule.type === "legacy") {
    const [block, gasPrice] = await Promise.all([client.getBlock({ blockTag: "latest" }), client.getGasPrice()]);
    return { baseFee: block.baseFeePerGas ?? 0n, tip: 0n, head: block.number, gasPrice };
  }
  const [block, tip] = await Promise.all([client.getBlock({ blockTag: "latest" }), client.estimateMaxPriorityFeePerGas()]);
  return { baseFee: block.baseFeePerGas ?? 0n, tip, head: block.number };
}

/**
 * The fees of a first version. EIP-1559: the suggested tip (at least the chain's floor) and room for the base fee to
 * double (six blocks of +12.5%). Legacy: the node's gas price (at least the chain's `minGasPriceGwei`, 0 unless set;
 * a legacy chain's tip floor does not apply), in both fields. Never above the chain's cap.
 *
 * @example initialFees(rule, { baseFee: 10n * GWEI, tip: GWEI, head }) // { maxFeePerGas: 21 gwei, maxPriorityFeePerGas: 1 gwei }
 * @example initialFees(legacyRule, { baseFee: 0n, tip: 0n, gasPrice: 3n * GWEI, head }) // both 3 gwei: the node's price
 */
export function initialFees(rule: FeeRule, market: Market): Fees {
  const cap = gweiOf(rule.maxFeePerGasGwei);
  if (rule.type === "legacy") return legacyFees(min(legacyPrice(rule, market), cap));
  const tip = max(market.tip, gweiOf(rule.minPriorityFeeGwei));
  const maxFeePerGas = 2n * market.baseFee + tip;
  const capped = maxFeePerGas > cap ? cap : maxFeePerGas;
  return { maxFeePerGas: capped, maxPriorityFeePerGas: tip > capped ? capped : tip };
}

/**
 * The fees of a replacement of `prev`: at least 10% up (EIP-1559: both fees; legacy: the gas price), and at least what
 * a first version would get now (a legacy chain: the node's gas price). Null when that needs more than the cap: the
 * transaction waits at the cap (a version at the cap is not replaced by one at the cap: a pool would refuse it).
 *
 * @example replacementFees(legacyRule, legacyFees(2n * GWEI), { baseFee: 0n, tip: 0n, gasPrice: GWEI, head }) // both 2.2 gwei
 */
export function replacementFees(rule: FeeRule, prev: Fees, market: Market): Fees | null {
  const cap = gweiOf(rule.maxFeePerGasGwei);
  if (rule.type === "legacy") {
    if (bump(prev.maxFeePerGas) > cap) return null;
    return legacyFees(min(max(bump(prev.maxFeePerGas), legacyPrice(rule, market)), cap));
  }
  const tip = max(bump(prev.maxPriorityFeePerGas), market.tip, gweiOf(rule.minPriorityFeeGwei));
  const maxFeePerGas = max(bump(prev.maxFeePerGas), 2n * market.baseFee + tip);
  if (bump(prev.maxFeePerGas) > cap || tip > cap) return null;
  return { maxFeePerGas: maxFeePerGas > cap ? cap : maxFeePerGas, maxPriorityFeePerGas: tip };
}

/**
 * Whether a pending version should be replaced: the base fee is above what it may pay (it cannot be included; a legacy
 * chain without a base fee has 0, so never), or it has waited the chain's blocks since it was signed (its tip, or a
 * legacy gas price, is too low for the blocks being built).
 *
 * @example isStuck(legacyRule, { ...legacyFees(2n * GWEI), signedBlock: 97n }, { baseFee: 0n, tip: 0n, head: 100n }) // true: 3 blocks
 */
export function isStuck(rule: FeeRule, version: Fees & { signedBlock: bigint }, market: Market): boolean {
  return version.maxFeePerGas < market.baseFee || market.head - version.signedBlock >= BigInt(rule.replaceAfterBlocks);
}

/**
 * Whether a version is priced under what the chain asks now, so the cap (not its turn) keeps it waiting: under the
 * base fee (it cannot be included), or on a legacy chain under the node's gas price too (a chain without a base fee
 * has no other price to fall below). What health's `atFeeCap` reports for a version the cap keeps from a replacement.
 *
 * @example pricedOut(legacyRule, legacyFees(40n * GWEI), { baseFee: 0n, tip: 0n, gasPrice: 60n * GWEI, head }) // true
 */
export function pricedOut(rule: FeeRule, version: Fees, market: Market): boolean {
  const asked = rule.type === "legacy" ? max(market.baseFee, market.gasPrice ?? 0n) : market.baseFee;
  return version.maxFeePerGas < asked;
}

/** A legacy chain's price now: the node's gas price, at least the chain's floor (none unless `minGasPriceGwei`). */
const legacyPrice = (rule: FeeRule, market: Market) => max(market.gasPrice ?? 0n, gweiOf(rule.minGasPriceGwei ?? 0));
