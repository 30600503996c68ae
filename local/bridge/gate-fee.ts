import type { Address, PublicClient } from "viem";
import { deBridgeGateAbi, dlnDestinationAbi } from "./abi.js";

// What a DLN message (an unlock or a cancel sent from a destination chain) must carry as msg.value, read on chain
// from that destination's DeBridgeGate (`deBridgeGate()`) with DeBridgeGate's formula (contracts/DeBridgeGateStandIn.sol):
//   fix = route fixedNativeFee, or globalFixedNativeFee when 0; minus the sender's discountFixBps
//   transferFee(value) = (route bps, or the global bps when 0) * (value - fix) / 10000; minus discountTransferBps
// The sender is the destination contract (the gate's msg.sender). The stand-in's cancel-tx and the solver's unlocks
// use it; real DLN's cancel-tx is priced the same way by DLN's API.

/** BPS denominator of DeBridgeGate. */
const BPS = 10_000n;
/** DlnDestination.NATIVE_AMOUNT_DIVIDER_FOR_TRANSFER_TO_SOLANA (Solana counts native amounts with 8 decimals). */
export const SOLANA_DIVIDER = 10n ** 10n;

/** A gate's fee for messages from one sender to one chain. */
export type GateFee = {
  gate: Address;
  /** The fixed fee after the sender's discount. */
  fixFee: bigint;
  transferFeeBps: bigint;
  discountTransferBps: bigint;
  /** The gate's global fees (DlnDestination's Solana check uses these, not the route's). */
  globalFixedNativeFee: bigint;
  globalTransferFeeBps: bigint;
};

/**
 * Reads the gate behind `destination` and its fee for a message from `destination` to `chainIdTo`; throws when the gate
 * does not support that route (the message would revert WrongChainTo).
 *
 *   await readGateFee(client, chain137.bridgeDestination, 777177n) // { fixFee: 500000000000000000n, transferFeeBps: 0n, … }
 */
export async function readGateFee(client: PublicClient, destination: Address, chainIdTo: bigint): Promise<GateFee> {
  const gate = await client.readContract({ address: destination, abi: dlnDestinationAbi, functionName: "deBridgeGate" });
  const [global, globalBps, route, discount] = await Promise.all([
    client.readContract({ address: gate, abi: deBridgeGateAbi, functionName: "globalFixedNativeFee" }),
    client.readContract({ address: gate, abi: deBridgeGateAbi, functionName: "globalTransferFeeBps" }),
    client.readContract({ address: gate, abi: deBridgeGateAbi, functionName: "getChainToConfig", args: [chainIdTo] }),
    client.readContract({ address: gate, abi: deBridgeGateAbi, functionName: "feeDiscount", args: [destination] }),
  ]);
  const [routeFee, supported, routeBps] = route;
  if (!supported) throw new Error(`the gate ${gate} sends no messages to chain ${chainIdTo}`);
  const fix = routeFee === 0n ? global : routeFee;
  return {
    gate,
    fixFee: fix - (fix * BigInt(discount[0])) / BPS,
    transferFeeBps: BigInt(routeBps === 0 ? globalBps : routeBps),
    discountTransferBps: BigInt(discount[1]),
    globalFixedNativeFee: global,
    globalTransferFeeBps: BigInt(globalBps),
  };
}

/** The gate's transfer fee on a message of `value` (value >= fixFee). */
export function transferFeeOf(fee: GateFee, value: bigint): bigint {
  const tf = (fee.transferFeeBps * (value - fee.fixFee)) / BPS;
  return tf - (tf * fee.discountTransferBps) / BPS;
}

/**
 * The least msg.value that pays the gate's fixed and transfer fee and leaves `executionFee` for the keeper.
 *
 *   messageValue({ fixFee: 5n * 10n ** 17n, transferFeeBps: 0n, … }, 5n * 10n ** 16n) // 550000000000000000n
 */
export function messageValue(fee: GateFee, executionFee: bigint): bigint {
  // x - tf(x) >= executionFee for x = value - fixFee; start from the closed form and step up over the rounding.
  const effectiveBps = fee.transferFeeBps - (fee.transferFeeBps * fee.discountTransferBps) / BPS;
  let x = effectiveBps >= BPS ? executionFee : (executionFee * BPS + (BPS - effectiveBps - 1n)) / (BPS - effectiveBps);
  while (x > executionFee && x - 1n - transferFeeOf(fee, fee.fixFee + x - 1n) >= executionFee) x--;
  while (x - transferFeeOf(fee, fee.fixFee + x) < executionFee) x++;
  return fee.fixFee + x;
}

/**
 * DlnDestination.sendSolanaOrderCancel's own check of msg.value (with the gate's global fees):
 * value >= fix and value / 1e10 >= (fix + transferFee + executionFee) / 1e10 + reward1 + reward2.
 */
export function coversSolanaRewards(fee: GateFee, value: bigint, executionFee: bigint, rewards: bigint): boolean {
  const fix = fee.globalFixedNativeFee;
  if (value < fix) return false;
  const tf = (fee.globalTransferFeeBps * (value - fix)) / BPS;
  return value / SOLANA_DIVIDER >= (fix + tf + executionFee) / SOLANA_DIVIDER + rewards;
}
