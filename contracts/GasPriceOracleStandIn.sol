// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title GasPriceOracleStandIn
/// @notice Local stand-in of the OP-stack GasPriceOracle predeploy (0x420000000000000000000000000000000000000F) on a
///         Base-like Anvil (chain id 8453): `getL1Fee(bytes)` with the Ecotone formula and Base-like parameters, so the
///         L1 data fee the service adds to its quotes is non-zero and computed the way the real predeploy computes it.
///         Placed by `anvil_setCode` (local/deploy.ts), so its parameters are constants, not storage.
contract GasPriceOracleStandIn {
    uint256 public constant DECIMALS = 6;
    /// @notice L1 base fee and blob base fee (wei) and their scalars, as the L1Block predeploy would report them.
    uint256 public constant l1BaseFee = 8 gwei;
    uint256 public constant blobBaseFee = 3;
    uint32 public constant baseFeeScalar = 2269;
    uint32 public constant blobBaseFeeScalar = 1055762;

    function decimals() external pure returns (uint256) {
        return DECIMALS;
    }

    /// @notice L1 gas of a transaction's bytes: 4 per zero byte, 16 per other byte, plus 68 bytes of signature.
    function getL1GasUsed(bytes memory _data) public pure returns (uint256) {
        uint256 total = 0;
        for (uint256 i = 0; i < _data.length; i++) total += _data[i] == 0 ? 4 : 16;
        return total + 68 * 16;
    }

    /// @notice The L1 data fee (wei) of an unsigned, fully RLP-encoded transaction (Ecotone).
    function getL1Fee(bytes memory _data) external pure returns (uint256) {
        uint256 scaledBaseFee = uint256(baseFeeScalar) * 16 * l1BaseFee;
        uint256 scaledBlobBaseFee = uint256(blobBaseFeeScalar) * blobBaseFee;
        return (getL1GasUsed(_data) * (scaledBaseFee + scaledBlobBaseFee)) / (16 * 10 ** DECIMALS);
    }
}
