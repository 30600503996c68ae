// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";

/// @dev Errors a sweep or a transfer out can revert with; shared so that the factory's ABI decodes them too.
interface IForwarderWalletErrors {
    error NotFactory();
    error NothingToSweep();
    error FeeExceedsBalance(uint256 fee, uint256 balance);
    error AmountExceedsBalance(uint256 amount, uint256 balance);
}

/// @title ForwarderWallet
/// @notice Implementation behind every deposit address. Each deposit address is a plain EIP-1167 clone of this
/// contract, deployed by the factory with CREATE2 under the salt keccak256(abi.encode(salt, payout)), so the
/// address commits to its payout. The wallet itself knows no payout: only the factory can move its funds, and
/// the factory sends them only to the payout the address commits to, to an allow-listed fee recipient, or to
/// itself within a batch transaction that pays them on to those two (WalletFactory); or, on its owner's call alone,
/// an exact amount to an address the owner chooses (`WalletFactory.returnFunds`: held, e.g. sanctioned, funds).
contract ForwarderWallet is IForwarderWalletErrors {
    using SafeERC20 for IERC20;

    /// @notice The factory that deployed this implementation; the only caller allowed to move funds.
    address public immutable factory;

    constructor() {
        factory = msg.sender;
    }

    /// @notice Accepts the native coin.
    receive() external payable {}

    /// @notice Sends the wallet's whole balance of `token` (native coin when zero) to the factory and returns it: the
    /// batch path, where the factory pays the payouts and fees of many wallets at once.
    function sweepToFactory(address token) external returns (uint256 balance) {
        if (msg.sender != factory) revert NotFactory();
        if (token == address(0)) {
            balance = address(this).balance;
            if (balance == 0) revert NothingToSweep();
            Address.sendValue(payable(msg.sender), balance);
        } else {
            balance = IERC20(token).balanceOf(address(this));
            if (balance == 0) revert NothingToSweep();
            IERC20(token).safeTransfer(msg.sender, balance);
        }
    }

    /// @notice Sends the wallet's whole balance of `token` (native coin when `token == address(0)`): `fee` of it to
    /// `feeRecipient`, the rest to `to`. Returns the balance swept. Only the factory calls it, and it chooses `to`.
    function sweep(address token, uint256 fee, address feeRecipient, address to) external returns (uint256 balance) {
        if (msg.sender != factory) revert NotFactory();
        balance = token == address(0) ? address(this).balance : IERC20(token).balanceOf(address(this));
        if (balance == 0) revert NothingToSweep();
        if (fee > balance) revert FeeExceedsBalance(fee, balance);
        uint256 amount = balance - fee;
        if (token == address(0)) {
            if (fee > 0) Address.sendValue(payable(feeRecipient), fee);
            if (amount > 0) Address.sendValue(payable(to), amount);
        } else {
            if (fee > 0) IERC20(token).safeTransfer(feeRecipient, fee);
            if (amount > 0) IERC20(token).safeTransfer(to, amount);
        }
    }

    /// @notice Sends exactly `amount` of `token` (native coin when `token == address(0)`) to `to`; the rest stays.
    /// Only the factory calls it, for its owner (`WalletFactory.returnFunds`), and it chooses `to`.
    function transferOut(address token, address to, uint256 amount) external {
        if (msg.sender != factory) revert NotFactory();
        if (amount == 0) revert NothingToSweep();
        uint256 balance = token == address(0) ? address(this).balance : IERC20(token).balanceOf(address(this));
        if (amount > balance) revert AmountExceedsBalance(amount, balance);
        if (token == address(0)) Address.sendValue(payable(to), amount);
        else IERC20(token).safeTransfer(to, amount);
    }
}
