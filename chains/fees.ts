import { parseGwei, type PublicClient } from "viem";
import type { FeeRule } from "./registry.js";

// How the transaction sender prices a transaction and its replacements (EIP-1559). Geth-style pools accept a
// replacement of a pending nonce only with both fees at least 10% higher; the base fee may rise 12.5% a block.

/** The fees of one signed version. */
export type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
/** What the chain asks now: the latest block's base fee and the node's suggested tip. */
export type Market = { baseFee: bigint; tip: bigint; head: bigint };

const max = (...xs: bigint[]) => xs.reduce((a, b) => (b > a ? b : a));
/** Up by at least 10% (rounded up), what a pool needs to take a replacement. */
export const bump = (x: bigint) => (x * 11n + 9n) / 10n;
/** A gwei amount of the registry or the environment, exactly (`parseGwei` of its decimal text). */
export const gweiOf = (n: number) => parseGwei(String(n));

/** The base fee, tip and head now. */
export async function marketOf(client: PublicClient): Promise<Market> {
  const [block, tip] = await Promise.all([client.getBlock({ blockTag: "latest" }), client.estimateMaxPriorityFeePerGas()]);
  return { baseFee: block.baseFeePerGas ?? 0n, tip, head: block.number };
}

/**
 * The fees of a first version: the suggested tip (at least the chain's floor) and room for the base fee to double
 * (six blocks of +12.5%), never above the chain's cap.
 *
 * @example initialFees(rule, { baseFee: 10n * GWEI, tip: GWEI, head }) // { maxFeePerGas: 21 gwei, maxPriorityFeePerGas: 1 gwei }
 */
export function initialFees(rule: FeeRule, market: Market): Fees {
  const cap = gweiOf(rule.maxFeePerGasGwei);
  const tip = max(market.tip, gweiOf(rule.minPriorityFeeGwei));
  const maxFeePerGas = 2n * market.baseFee + tip;
  const capped = maxFeePerGas > cap ? cap : maxFeePerGas;
  return { maxFeePerGas: capped, maxPriorityFeePerGas: tip > capped ? capped : tip };
}

/**
 * The fees of a replacement of `prev`: both at least 10% up, and at least what a first version would get now. Null
 * when that needs more than the cap: the transaction waits at the cap (a version at the cap is not replaced by one
 * at the cap: a pool would refuse it).
 */
export function replacementFees(rule: FeeRule, prev: Fees, market: Market): Fees | null {
  const cap = gweiOf(rule.maxFeePerGasGwei);
  const tip = max(bump(prev.maxPriorityFeePerGas), market.tip, gweiOf(rule.minPriorityFeeGwei));
  const maxFeePerGas = max(bump(prev.maxFeePerGas), 2n * market.baseFee + tip);
  if (bump(prev.maxFeePerGas) > cap || tip > cap) return null;
  return { maxFeePerGas: maxFeePerGas > cap ? cap : maxFeePerGas, maxPriorityFeePerGas: tip };
}

/**
 * Whether a pending version should be replaced: the base fee is above what it may pay (it cannot be included), or
 * it has waited the chain's blocks since it was signed (its tip is too low for the blocks being built).
 */
export function isStuck(rule: FeeRule, version: Fees & { signedBlock: bigint }, market: Market): boolean {
  return version.maxFeePerGas < market.baseFee || market.head - version.signedBlock >= BigInt(rule.replaceAfterBlocks);
}
