// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title SanctionsOracle
/// @notice The local chains' stand-in for the on-chain sanctions oracle Chainalysis maintains on public networks
/// (0x40C57923924B5c5c5455c48D93317139ADDaC8fb on Ethereum and several others): the same read interface,
/// `isSanctioned(address) returns (bool)`, and the same owner-only list updates. The service only reads it
/// (modules/sanctions/sources.ts); tests and the operator of a local stack flag addresses with it.
contract SanctionsOracle is Ownable {
    event SanctionedAddressesAdded(address[] addrs);
    event SanctionedAddressesRemoved(address[] addrs);

    mapping(address => bool) private _sanctioned;

    constructor(address owner_) Ownable(owner_) {}

    /// @notice A human-readable name, as the public oracle has.
    function name() external pure returns (string memory) {
        return "Local sanctions oracle";
    }

    /// @notice Flags every address of `newSanctions` (already flagged ones stay flagged).
    function addToSanctionsList(address[] calldata newSanctions) external onlyOwner {
        for (uint256 i = 0; i < newSanctions.length; ++i) _sanctioned[newSanctions[i]] = true;
        emit SanctionedAddressesAdded(newSanctions);
    }

    /// @notice Unflags every address of `removeSanctions`.
    function removeFromSanctionsList(address[] calldata removeSanctions) external onlyOwner {
        for (uint256 i = 0; i < removeSanctions.length; ++i) _sanctioned[removeSanctions[i]] = false;
        emit SanctionedAddressesRemoved(removeSanctions);
    }

    /// @notice Whether `addr` is on the list.
    function isSanctioned(address addr) external view returns (bool) {
        return _sanctioned[addr];
    }
}
