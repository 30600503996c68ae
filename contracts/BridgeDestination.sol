// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {Order, IBridgeErrors} from "./BridgeOrder.sol";

/// @title BridgeDestination
/// @notice The destination side of the local DLN-like bridge. A solver fulfils an order by paying `takeAmount` of
/// `takeToken` from its own balance straight to `receiver` (so the receiver sees an ordinary ERC-20 Transfer or
/// native credit), then asks for its escrow on the source with `sendEvmUnlock`. While nobody fulfilled an order, its
/// `orderAuthorityDst` may cancel it (`sendEvmOrderCancel`). The events are what the messenger relays to BridgeSource.
/// Holds no funds and has no owner.
contract BridgeDestination is ReentrancyGuardTransient, IBridgeErrors {
    using SafeERC20 for IERC20;

    /// @dev Status values of `takeStatus`.
    uint8 internal constant NOT_SET = 0;
    uint8 internal constant FULFILLED = 1;
    uint8 internal constant SENT_UNLOCK = 2;
    uint8 internal constant SENT_CANCEL = 3;

    struct TakeState {
        uint8 status;
        address taker;
    }

    /// The order does not hash to the id given with it.
    error OrderIdMismatch(bytes32 orderId, bytes32 computed);
    /// The order is not in the status the call needs (`status` is its current one).
    error WrongTakeStatus(bytes32 orderId, uint8 status);
    error NotTaker(address caller);
    error NotOrderAuthority(address caller);

    event FulfilledOrder(bytes32 indexed orderId, Order order, address taker);
    event SentOrderUnlock(bytes32 indexed orderId, address beneficiary);
    event SentOrderCancel(bytes32 indexed orderId, address refundTo);

    mapping(bytes32 => TakeState) private _orders;

    /// @notice Pays `o.takeAmount` of `o.takeToken` from the caller directly to `o.receiver` (native: msg.value,
    /// forwarded) and makes the caller the order's taker.
    function fulfillOrder(Order calldata o, bytes32 orderId) external payable nonReentrant {
        TakeState storage s = _open(o, orderId);
        (s.status, s.taker) = (FULFILLED, msg.sender);
        if (o.takeToken == address(0)) {
            if (msg.value != o.takeAmount) revert WrongValue(o.takeAmount, msg.value);
            Address.sendValue(payable(o.receiver), o.takeAmount);
        } else {
            if (msg.value != 0) revert WrongValue(0, msg.value);
            IERC20(o.takeToken).safeTransferFrom(msg.sender, o.receiver, o.takeAmount);
        }
        emit FulfilledOrder(orderId, o, msg.sender);
    }

    /// @notice The taker asks the source to pay the escrow to `beneficiary` (relayed as `claimUnlock`).
    function sendEvmUnlock(bytes32 orderId, address beneficiary) external nonReentrant {
        if (beneficiary == address(0)) revert ZeroAddress();
        TakeState storage s = _orders[orderId];
        if (s.status != FULFILLED) revert WrongTakeStatus(orderId, s.status);
        if (msg.sender != s.taker) revert NotTaker(msg.sender);
        s.status = SENT_UNLOCK;
        emit SentOrderUnlock(orderId, beneficiary);
    }

    /// @notice The order's authority cancels an order nobody fulfilled; from then on nobody can (relayed as `claimCancel`).
    function sendEvmOrderCancel(Order calldata o, bytes32 orderId) external nonReentrant {
        TakeState storage s = _open(o, orderId);
        if (msg.sender != o.orderAuthorityDst) revert NotOrderAuthority(msg.sender);
        s.status = SENT_CANCEL;
        emit SentOrderCancel(orderId, o.refundTo);
    }

    /// @notice 0 NotSet, 1 Fulfilled, 2 SentUnlock, 3 SentCancel.
    function takeStatus(bytes32 orderId) external view returns (uint8) {
        return _orders[orderId].status;
    }

    /// @notice The account that fulfilled the order (zero before).
    function takerOf(bytes32 orderId) external view returns (address) {
        return _orders[orderId].taker;
    }

    /// @dev The state of a genuine order for this chain that nothing happened to yet.
    function _open(Order calldata o, bytes32 orderId) private view returns (TakeState storage s) {
        bytes32 computed = keccak256(abi.encode(o));
        if (computed != orderId) revert OrderIdMismatch(orderId, computed);
        if (o.takeChainId != block.chainid) revert WrongChain(o.takeChainId);
        s = _orders[orderId];
        if (s.status != NOT_SET) revert WrongTakeStatus(orderId, s.status);
    }
}
