// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";

/// @dev Errors a sweep can revert with; shared so that the factory's ABI decodes them too.
interface IForwarderWalletErrors {
    error NotFactory();
    error NothingToSweep();
    error FeeExceedsBalance(uint256 fee, uint256 balance);
}

/// @title ForwarderWallet
/// @notice Implementation behind every deposit address. Each deposit address is a clone of this contract
/// (OpenZeppelin `Clones` with immutable args) whose only immutable argument is its payout address, so the
/// CREATE2 address commits to where the funds can go. Only the factory can move funds, and only to the
/// committed payout (plus the fee the factory's settler chooses, sent to an allow-listed fee recipient).
contract ForwarderWallet is IForwarderWalletErrors {
    using SafeERC20 for IERC20;

    /// @notice The factory that deployed this implementation; the only caller allowed to sweep.
    address public immutable factory;

    constructor() {
        factory = msg.sender;
    }

    /// @notice Accepts the native coin.
    receive() external payable {}

    /// @notice The payout address this wallet is committed to (its clone argument).
    function payout() public view returns (address) {
        return address(bytes20(Clones.fetchCloneArgs(address(this))));
    }

    /// @notice Sends the wallet's whole balance of `token` (native coin when `token == address(0)`) to the payout,
    /// minus `fee` sent to `feeRecipient`. Returns what the payout received.
    function sweep(address token, uint256 fee, address feeRecipient) external returns (uint256 amount) {
        if (msg.sender != factory) revert NotFactory();
        address to = payout();
        uint256 balance = token == address(0) ? address(this).balance : IERC20(token).balanceOf(address(this));
        if (balance == 0) revert NothingToSweep();
        if (fee > balance) revert FeeExceedsBalance(fee, balance);
        amount = balance - fee;
        if (token == address(0)) {
            if (fee > 0) Address.sendValue(payable(feeRecipient), fee);
            if (amount > 0) Address.sendValue(payable(to), amount);
        } else {
            if (fee > 0) IERC20(token).safeTransfer(feeRecipient, fee);
            if (amount > 0) IERC20(token).safeTransfer(to, amount);
        }
    }
}
