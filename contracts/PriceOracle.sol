// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title PriceOracle
/// @notice USD prices with 18 decimals keyed by token symbol. Symbols are case-insensitive (stored uppercased).
contract PriceOracle is Ownable {
    struct Price {
        uint192 price;
        uint64 updatedAt;
    }

    error LengthMismatch();
    error PriceTooLarge();

    event PriceUpdated(string symbol, uint256 price);

    mapping(bytes32 => Price) private _prices;

    constructor(address owner_) Ownable(owner_) {}

    function setPrice(string calldata symbol, uint256 price) external onlyOwner {
        _set(symbol, price);
    }

    function setPrices(string[] calldata symbols, uint256[] calldata prices) external onlyOwner {
        if (symbols.length != prices.length) revert LengthMismatch();
        for (uint256 i = 0; i < symbols.length; ++i) _set(symbols[i], prices[i]);
    }

    /// @notice The price of `symbol` (18 decimals) and when it was set; (0, 0) when unknown.
    function getPrice(string calldata symbol) external view returns (uint256 price, uint256 updatedAt) {
        Price memory p = _prices[keccak256(_upper(symbol))];
        return (p.price, p.updatedAt);
    }

    function _set(string calldata symbol, uint256 price) private {
        if (price > type(uint192).max) revert PriceTooLarge();
        bytes memory sym = _upper(symbol);
        _prices[keccak256(sym)] = Price(uint192(price), uint64(block.timestamp));
        emit PriceUpdated(string(sym), price);
    }

    function _upper(string calldata s) private pure returns (bytes memory out) {
        out = bytes(s);
        for (uint256 i = 0; i < out.length; ++i) {
            bytes1 c = out[i];
            if (c >= 0x61 && c <= 0x7a) out[i] = bytes1(uint8(c) - 32);
        }
    }
}
