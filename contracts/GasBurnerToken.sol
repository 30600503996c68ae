// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title GasBurnerToken
/// @notice Tests only: an ERC-20 whose `transfer` burns about `burn` gas before it moves the tokens (a hostile
/// token that makes whoever sweeps it pay). Anyone may mint and set the burn. Never deployed outside local chains.
contract GasBurnerToken is ERC20 {
    uint256 public burn;
    uint256 private sink;

    constructor(uint256 burn_) ERC20("Gas Burner", "BURN") {
        burn = burn_;
    }

    function setBurn(uint256 burn_) external {
        burn = burn_;
    }

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function transfer(address to, uint256 value) public override returns (bool) {
        uint256 start = gasleft();
        uint256 x = sink;
        while (start - gasleft() < burn) {
            x = uint256(keccak256(abi.encode(x)));
        }
        sink = x;
        return super.transfer(to, value);
    }
}
