// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title NodeInterfaceStandIn
/// @notice Local stand-in of Arbitrum's NodeInterface (0x00000000000000000000000000000000000000C8, a virtual contract
///         real nodes answer for eth_call) on an Anvil with chain id 42161: `gasEstimateL1Component`, the L2 gas a
///         transaction's L1 calldata costs (its bytes at 16 gas each plus a fixed overhead, priced at the L1 base fee,
///         in units of the L2 base fee), which Arbitrum folds into eth_estimateGas. Placed by `anvil_setCode`.
contract NodeInterfaceStandIn {
    uint256 public constant l1BaseFeeEstimate = 8 gwei;
    /// @notice Bytes a transaction carries beyond its calldata (signature, nonce, fees, ...).
    uint256 public constant TX_OVERHEAD_BYTES = 140;

    function gasEstimateL1Component(address, bool, bytes calldata data)
        external
        payable
        returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFee)
    {
        baseFee = block.basefee == 0 ? 1 : block.basefee;
        uint256 l1Cost = 16 * (data.length + TX_OVERHEAD_BYTES) * l1BaseFeeEstimate;
        gasEstimateForL1 = uint64(l1Cost / baseFee);
        l1BaseFee = l1BaseFeeEstimate;
    }
}
