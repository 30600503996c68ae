import { decodeFunctionData, toFunctionSelector, getAbiItem, type Address, type Hex } from "viem";
import { bytesToEvmAddress, DLN_SOLANA_CHAIN_ID, dlnDestinationAbi, dlnOrderId, type DlnOrder } from "./dln-order.js";
import { sameAddress } from "./orders.js";
import type { BridgeCancelTx } from "./provider.js";

/** DlnDestination's two cancels: sendEvmOrderCancel (0xd38d9626) for EVM sources, sendSolanaOrderCancel (0x9327145d) for Solana. */
export const CANCEL_SELECTORS = (["sendEvmOrderCancel", "sendSolanaOrderCancel"] as const).map((name) =>
  toFunctionSelector(getAbiItem({ abi: dlnDestinationAbi, name })),
);

/** A cancel transaction that passed the check: the order it cancels and what it pays for (cancel-fee.ts bounds `value`). */
export type CheckedCancel = {
  order: DlnOrder;
  /** Who the source refunds: the payer (an EVM address, or the 32 bytes of a Solana key as hex). */
  beneficiary: string;
  executionFee: bigint;
  /** Solana only: the two claim instruction rewards, in the destination coin's wei (DLN counts them in units of 1e10 wei). */
  solanaRewardsWei: bigint;
};

export type CancelWant = {
  chainId: number;
  authority: Address;
  destination: Address | undefined;
  orderId: string;
  srcChainId: number;
  /** The payer as the order names it on the source: an EVM address, or a Solana key's 32 bytes as 0x-hex. */
  payer: string;
};

/**
 * The provider's cancel transaction checked against what the service knows of the order, never trusting the provider
 * beyond it: on the order's destination chain, from our authority, to that chain's bridge destination (DLN's
 * DlnDestination), calling DLN's cancel for the order's source kind, with an order that hashes to this order's id, takes
 * on this chain, gives on the order's source, has our authority, and refunds the payer. A string says why not.
 * @example
 * const c = checkCancelTx(tx, { chainId: 137, authority, destination: chain.bridgeDestination, orderId, srcChainId: 8453, payer });
 * if (typeof c === "string") note(c); else send(tx); // c.order, c.beneficiary
 */
export function checkCancelTx(tx: Pick<BridgeCancelTx, "to" | "data" | "chainId" | "from">, want: CancelWant): CheckedCancel | string {
  if (tx.chainId !== want.chainId || !sameAddress(tx.from, want.authority))
    return `cancel-tx for chain ${tx.chainId} from ${tx.from}: not ours to send`;
  if (!want.destination) return `no bridge destination contract configured for chain ${want.chainId}: cannot cancel`;
  if (!sameAddress(tx.to, want.destination)) return `cancel-tx to ${tx.to}, not the bridge destination ${want.destination}: refused`;
  const selector = tx.data.slice(0, 10).toLowerCase();
  if (!CANCEL_SELECTORS.includes(selector as Hex)) return `cancel-tx calls ${selector}, not a DLN order cancel: refused`;
  let call;
  try {
    call = decodeFunctionData({ abi: dlnDestinationAbi, data: tx.data as Hex });
  } catch {
    return "cancel-tx calldata does not decode as DLN's cancel: refused";
  }
  const solana = want.srcChainId === DLN_SOLANA_CHAIN_ID;
  if (call.functionName !== (solana ? "sendSolanaOrderCancel" : "sendEvmOrderCancel"))
    return `cancel-tx calls ${call.functionName} for an order from chain ${want.srcChainId}: refused`;
  const [order, beneficiary, executionFee] = call.args as unknown as [DlnOrder, string, bigint, bigint?, bigint?];
  if (dlnOrderId(order).toLowerCase() !== want.orderId.toLowerCase()) return `cancel-tx order does not hash to ${want.orderId}: refused`;
  if (order.takeChainId !== BigInt(want.chainId) || order.giveChainId !== BigInt(want.srcChainId))
    return `cancel-tx order goes from ${order.giveChainId} to ${order.takeChainId}, not ${want.srcChainId} to ${want.chainId}: refused`;
  let authority: Address;
  try {
    authority = bytesToEvmAddress(order.orderAuthorityAddressDst);
  } catch {
    return "cancel-tx order has no EVM order authority: refused";
  }
  if (!sameAddress(authority, want.authority)) return `cancel-tx order's authority ${authority} is not ours: refused`;
  const payerOk = solana ? beneficiary.toLowerCase() === want.payer.toLowerCase() : sameAddress(beneficiary, want.payer);
  if (!payerOk) return `cancel-tx refunds ${beneficiary}, not the payer ${want.payer}: refused`;
  const rewards = solana ? ((call.args[3] as bigint) + (call.args[4] as bigint)) * 10n ** 10n : 0n;
  return { order, beneficiary, executionFee, solanaRewardsWei: rewards };
}
