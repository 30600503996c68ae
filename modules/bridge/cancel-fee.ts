import type { Address, PublicClient } from "viem";
import { Unavailable } from "../../core/errors.js";
import { deBridgeGateAbi, dlnDestinationAbi } from "./dln-order.js";

/**
 * What deBridge's messaging layer charges for the message a cancel sends from the destination chain back to the
 * order's source chain. DLN's DlnDestination forwards the cancel's whole `msg.value` to its DeBridgeGate, which keeps
 * a fixed native fee (the route's, else the gate's global one: 0.5 MATIC on 137, 0.001 ETH on 1/8453/42161, 0.005 BNB
 * on 56) less the sender's discount, then a transfer fee in bps of the rest; what is left pays the keepers (the
 * execution fee). deBridge: "fees must not be hardcoded but queried dynamically from the state of the DeBridgeGate".
 */
export type MessagingFee = {
  gate: Address;
  /** The fixed fee after DlnDestination's discount (wei of the destination's native coin). */
  fixFee: bigint;
  transferFeeBps: number;
  discountTransferBps: number;
};

const TTL_MS = 10 * 60_000;
const cache = new Map<string, { fee: MessagingFee; at: number }>();

/**
 * The messaging fee of a cancel sent to `destination` (DlnDestination) for an order from `srcChainId`, read on chain
 * (deBridgeGate() of the destination, then the gate's route config, global fee and the destination's discount) and kept
 * 10 minutes. Throws Unavailable when it cannot be read, or when the gate does not serve the route.
 * @example
 * const fee = await readMessagingFee(client, chain.bridgeDestination, 777177, deps.now());
 * fee.fixFee // 500000000000000000n on Polygon (0.5 MATIC)
 */
export async function readMessagingFee(client: PublicClient, destination: Address, srcChainId: number, now: number): Promise<MessagingFee> {
  const key = `${client.chain?.id ?? "?"}:${destination.toLowerCase()}:${srcChainId}`;
  const hit = cache.get(key);
  if (hit && now - hit.at < TTL_MS) return hit.fee;
  let fee: MessagingFee;
  try {
    const gate = await client.readContract({ address: destination, abi: dlnDestinationAbi, functionName: "deBridgeGate" });
    const read = <F extends "globalFixedNativeFee" | "globalTransferFeeBps">(functionName: F) =>
      client.readContract({ address: gate, abi: deBridgeGateAbi, functionName });
    const [globalFix, globalBps, route, discount] = await Promise.all([
      read("globalFixedNativeFee"),
      read("globalTransferFeeBps"),
      client.readContract({ address: gate, abi: deBridgeGateAbi, functionName: "getChainToConfig", args: [BigInt(srcChainId)] }),
      client.readContract({ address: gate, abi: deBridgeGateAbi, functionName: "feeDiscount", args: [destination] }),
    ]);
    const [routeFix, supported, routeBps] = route;
    const [discountFixBps, discountTransferBps] = discount;
    if (!supported) throw new Unavailable(`the bridge's messaging gate does not serve chain ${srcChainId}`);
    const fix = routeFix === 0n ? globalFix : routeFix;
    fee = {
      gate,
      fixFee: fix - (fix * BigInt(discountFixBps)) / 10_000n,
      transferFeeBps: routeBps === 0 ? globalBps : routeBps,
      discountTransferBps,
    };
  } catch (e) {
    if (e instanceof Unavailable) throw e;
    throw new Unavailable(`cannot read the bridge's messaging fee: ${(e as Error).message.split("\n")[0]}`);
  }
  cache.set(key, { fee, at: now });
  return fee;
}

/**
 * The gate's transfer fee on a cancel carrying `value`: bps of what is above the fixed fee, less the discount.
 * @example transferFeeOf({ fixFee: 10n ** 15n, transferFeeBps: 10, discountTransferBps: 0, gate }, 2n * 10n ** 15n) // 10n ** 12n
 */
export function transferFeeOf(fee: MessagingFee, value: bigint): bigint {
  if (value <= fee.fixFee) return 0n;
  const tf = ((value - fee.fixFee) * BigInt(fee.transferFeeBps)) / 10_000n;
  return tf - (tf * BigInt(fee.discountTransferBps)) / 10_000n;
}

/**
 * Why a cancel's `value` must not be attached, or null: below the messaging fee it would revert; above the fee by more
 * than `maxExtra` (the execution fee and, for a Solana source, the claim rewards: BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD at
 * the native price) or above the chain's own ceiling (BRIDGE_CANCEL_MAX_VALUE_WEI_<chainId>) it pays more than a cancel needs.
 * @example cancelValueRefusal(6n * 10n ** 17n, fee, 2n * 10n ** 17n) // null: 0.5 fee + 0.1 for the keepers on Polygon
 */
export function cancelValueRefusal(
  value: bigint,
  fee: MessagingFee,
  maxExtra: bigint,
  ceiling?: { wei: bigint; chainId: number },
): string | null {
  if (value < fee.fixFee) return `cancel-tx value ${value} wei below the bridge's messaging fee ${fee.fixFee}: would revert`;
  const extra = value - fee.fixFee - transferFeeOf(fee, value);
  if (extra > maxExtra)
    return `cancel-tx value ${value} wei: ${extra} above the messaging fee ${fee.fixFee}, more than the ${maxExtra} allowed (BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD): refused`;
  if (ceiling && value > ceiling.wei)
    return `cancel-tx value ${value} wei above BRIDGE_CANCEL_MAX_VALUE_WEI_${ceiling.chainId} ${ceiling.wei}: refused`;
  return null;
}

/** Forgets read fees (tests that change a gate's fee). */
export function clearMessagingFees(): void {
  cache.clear();
}
