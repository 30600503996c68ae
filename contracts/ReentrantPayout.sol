// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ReentrantPayout
/// @notice Tests only: a payout contract that, when paid the native coin, replays a call it was armed with (into the
/// factory, a wallet, ...) and records how that call ended. Never deployed outside local chains.
contract ReentrantPayout {
    address public target;
    bytes public data;
    uint256 public calls;
    bool public lastOk;
    bytes public lastResult;

    function arm(address target_, bytes calldata data_) external {
        target = target_;
        data = data_;
    }

    receive() external payable {
        if (target == address(0)) return;
        (bool ok, bytes memory result) = target.call(data);
        calls += 1;
        lastOk = ok;
        lastResult = result;
    }
}
