// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title LogSpammer
/// @notice Load for the indexing benchmarks (bench/): foreign ERC-20 Transfer logs in bulk, and batches of
/// real token transfers. Never deployed outside local chains.
contract LogSpammer {
    // keccak256("Transfer(address,address,uint256)"): the topic ERC-20 and ERC-721 share.
    bytes32 private constant TRANSFER = 0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef;

    /// @notice Emits `n` ERC-20 Transfer logs from the caller to pseudo-random addresses (keccak of seed, i):
    /// what a busy token's transfers look like to an indexer, for ~2k gas a log.
    function spam(uint256 n, uint256 seed) external {
        assembly {
            for {
                let i := 0
            } lt(i, n) {
                i := add(i, 1)
            } {
                mstore(0x00, seed)
                mstore(0x20, i)
                let to := shr(96, keccak256(0x00, 0x40))
                mstore(0x00, add(i, 1))
                log3(0x00, 0x20, TRANSFER, caller(), to)
            }
        }
    }

    /// @notice Sends `amount` of `token` (held by this contract) to each of `to`: several real transfers in one transaction.
    function transferMany(address token, address[] calldata to, uint256 amount) external {
        for (uint256 i = 0; i < to.length; i++) {
            (bool ok, bytes memory ret) = token.call(abi.encodeWithSelector(0xa9059cbb, to[i], amount));
            require(ok && (ret.length == 0 || abi.decode(ret, (bool))), "transfer failed");
        }
    }
}
