// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice A cross-chain order of the local DLN-like bridge (BridgeSource escrows, BridgeDestination fulfils).
/// Its id is keccak256(abi.encode(order)): off chain, viem `keccak256(encodeAbiParameters([orderTuple], [order]))`.
/// Addresses are plain EVM addresses (DLN uses bytes for non-EVM chains; every local chain is an EVM chain).
struct Order {
    /// The create transaction's salt: one maker can place equal orders under different nonces.
    uint64 nonce;
    /// Who created (and paid) the order on the source.
    address maker;
    uint256 giveChainId;
    /// Zero address = the native coin.
    address giveToken;
    /// What the source escrows, paid to the solver on unlock or to `refundTo` on cancel.
    uint256 giveAmount;
    uint256 takeChainId;
    /// Zero address = the native coin.
    address takeToken;
    /// Exactly what `receiver` gets on the destination.
    uint256 takeAmount;
    address receiver;
    /// May cancel the order on the destination while nobody fulfilled it.
    address orderAuthorityDst;
    /// Gets the escrow back once a cancel is relayed to the source.
    address refundTo;
}

/// @notice Errors both bridge contracts raise.
interface IBridgeErrors {
    /// The order is not for this chain (`giveChainId` on the source, `takeChainId` on the destination).
    error WrongChain(uint256 chainId);
    /// msg.value must be the native amount of the order, or zero for a token.
    error WrongValue(uint256 expected, uint256 sent);
    error ZeroAddress();
}
