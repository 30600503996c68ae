import { encodeAbiParameters, getAbiItem, keccak256, type Address, type Hex } from "viem";
import { bridgeDestinationAbi } from "../../abis/BridgeDestination.js";
import { bridgeSourceAbi } from "../../abis/BridgeSource.js";

// The bridge contracts (contracts/BridgeSource.sol, contracts/BridgeDestination.sol, contracts/BridgeOrder.sol) as
// the stand-in and the solver use them: their compiled ABIs, the Order struct, its id and the status numbers.
export { bridgeDestinationAbi, bridgeSourceAbi };

/** A bridge order as the contracts take and emit it (amounts in smallest units; 0x0 token = native coin). */
export type BridgeOrder = {
  nonce: bigint;
  maker: Address;
  giveChainId: bigint;
  giveToken: Address;
  giveAmount: bigint;
  takeChainId: bigint;
  takeToken: Address;
  takeAmount: bigint;
  receiver: Address;
  orderAuthorityDst: Address;
  refundTo: Address;
};

const ORDER_PARAMS = getAbiItem({ abi: bridgeSourceAbi, name: "createOrder" }).inputs;

/**
 * The order's id, as both contracts compute it: keccak256(abi.encode(order)).
 *
 *   orderIdOf({ nonce: 1n, maker, giveChainId: 137n, ... }) // "0x…" (32 bytes)
 */
export function orderIdOf(order: BridgeOrder): Hex {
  return keccak256(encodeAbiParameters(ORDER_PARAMS, [order]));
}

/** giveStatus values on the source. */
export const GIVE = { NotSet: 0, Created: 1, ClaimedUnlock: 2, ClaimedCancel: 3 } as const;
/** takeStatus values on the destination. */
export const TAKE = { NotSet: 0, Fulfilled: 1, SentUnlock: 2, SentCancel: 3 } as const;
