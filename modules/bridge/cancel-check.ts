import { getAbiItem, toFunctionSelector, type Address } from "viem";
import { bridgeDestinationAbi } from "../../abis/BridgeDestination.js";
import { sameAddress } from "./orders.js";
import type { BridgeCancelTx } from "./provider.js";

/** Selectors a cancel may call: our BridgeDestination's (the local stand-in) and DLN's DlnDestination.sendEvmOrderCancel. */
export const CANCEL_SELECTORS = [toFunctionSelector(getAbiItem({ abi: bridgeDestinationAbi, name: "sendEvmOrderCancel" })), "0xd38d9626"];

/**
 * Why the provider's cancel transaction must not be signed, or null when it is this order's cancel: on the order's
 * destination chain, from our authority, to that chain's configured bridge destination contract, calling
 * sendEvmOrderCancel, with at most `maxValue` wei attached. The provider's answer is never trusted beyond that.
 * @example cancelRefusal(tx, { chainId: 777177, authority, destination: chain.bridgeDestination, maxValue: 10n ** 17n }) // null
 */
export function cancelRefusal(
  tx: Pick<BridgeCancelTx, "to" | "data" | "value" | "chainId" | "from">,
  want: { chainId: number; authority: Address; destination: Address | undefined; maxValue: bigint },
): string | null {
  if (tx.chainId !== want.chainId || !sameAddress(tx.from, want.authority))
    return `cancel-tx for chain ${tx.chainId} from ${tx.from}: not ours to send`;
  if (!want.destination) return `no bridge destination contract configured for chain ${want.chainId}: cannot cancel`;
  if (!sameAddress(tx.to, want.destination)) return `cancel-tx to ${tx.to}, not the bridge destination ${want.destination}: refused`;
  const selector = tx.data.slice(0, 10).toLowerCase();
  if (!/^0x[0-9a-f]{8}$/.test(selector) || !CANCEL_SELECTORS.includes(selector))
    return `cancel-tx calls ${selector}, not sendEvmOrderCancel: refused`;
  if (tx.value > want.maxValue) return `cancel-tx value ${tx.value} wei above BRIDGE_CANCEL_MAX_VALUE_WEI ${want.maxValue}: refused`;
  return null;
}
