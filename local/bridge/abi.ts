import { getAddress, type Address } from "viem";
import { bridgeDestinationAbi } from "../../abis/BridgeDestination.js";
import { bridgeRouterStandInAbi } from "../../abis/BridgeRouterStandIn.js";
import { bridgeSourceAbi } from "../../abis/BridgeSource.js";
import { deBridgeGateStandInAbi } from "../../abis/DeBridgeGateStandIn.js";
import {
  bytesToEvmAddress,
  deBridgeGateAbi,
  DLN_SOLANA_CHAIN_ID,
  dlnDestinationAbi,
  dlnOrderId,
  evmAddressToBytes,
  type DlnOrder,
} from "../../modules/bridge/index.js";

// The local DLN stand-in's contracts (contracts/BridgeSource.sol, BridgeDestination.sol, DeBridgeGateStandIn.sol,
// BridgeRouterStandIn.sol) as the stand-in, the solver and the deployment use them: their compiled ABIs, DLN's order
// (modules/bridge/dln-order.ts, shared with the service), the status numbers and DLN's fixed addresses.
export { bridgeDestinationAbi, bridgeRouterStandInAbi, bridgeSourceAbi, deBridgeGateStandInAbi };
export { bytesToEvmAddress, deBridgeGateAbi, DLN_SOLANA_CHAIN_ID, dlnDestinationAbi, dlnOrderId, evmAddressToBytes, type DlnOrder };

/** giveOrders(id).status on the source (DLN's OrderGiveStatus). */
export const GIVE = { NotSet: 0, Created: 1, ClaimedUnlock: 2, ClaimedCancel: 3 } as const;
/** takeOrders(id).status on the destination (DLN's OrderTakeStatus). */
export const TAKE = { NotSet: 0, Fulfilled: 1, SentUnlock: 2, SentCancel: 3 } as const;

/**
 * DLN's DeBridgeRouter, "used exclusively by the DLN API to swap input asset for one of the settlement assets prior to
 * order creation" (dln-contracts README). The local pre-swap router (BridgeRouterStandIn) is placed at this address
 * on every local chain, as Multicall3 is placed at its canonical one, so the stand-in finds it without a deployments
 * field.
 */
export const DLN_ROUTER: Address = getAddress("0x663dc15d3c1ac63ff12e45ab68fea3f0a883c251");
