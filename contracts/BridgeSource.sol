// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {Order, IBridgeErrors} from "./BridgeOrder.sol";

/// @title BridgeSource
/// @notice The source side of the local DLN-like bridge: a maker escrows `giveAmount` of `giveToken` with
/// `createOrder`; the escrow later goes to the solver (`claimUnlock`, once the destination saw the order fulfilled)
/// or back to `refundTo` (`claimCancel`, once the destination cancelled it). Both claims come from `messenger`, which
/// stands in for deBridge's cross-chain messaging: it relays the destination's SentOrderUnlock / SentOrderCancel.
contract BridgeSource is Ownable, ReentrancyGuardTransient, IBridgeErrors {
    using SafeERC20 for IERC20;

    /// @dev Status values of `giveStatus`.
    uint8 internal constant NOT_SET = 0;
    uint8 internal constant CREATED = 1;
    uint8 internal constant CLAIMED_UNLOCK = 2;
    uint8 internal constant CLAIMED_CANCEL = 3;

    /// @dev What a claim needs, kept at creation (the claims name the order by id only).
    struct GiveState {
        uint8 status;
        address token;
        uint256 amount;
        address refundTo;
    }

    error NotMessenger(address caller);
    error NotMaker(address caller);
    error ZeroAmount();
    /// The order is not in the status the call needs (`status` is its current one).
    error WrongGiveStatus(bytes32 orderId, uint8 status);
    /// The token moved another amount than `giveAmount` (a fee-on-transfer token would leave the escrow short).
    error ReceivedAmountMismatch(uint256 expected, uint256 received);

    event CreatedOrder(bytes32 indexed orderId, Order order);
    event ClaimedUnlock(bytes32 indexed orderId, address beneficiary, uint256 amount);
    event ClaimedOrderCancel(bytes32 indexed orderId, address refundTo, uint256 amount);
    event MessengerUpdated(address indexed messenger);

    /// @notice The only account that may relay unlocks and cancels from the destinations.
    address public messenger;

    mapping(bytes32 => GiveState) private _orders;

    modifier onlyMessenger() {
        if (msg.sender != messenger) revert NotMessenger(msg.sender);
        _;
    }

    constructor() Ownable(msg.sender) {}

    function setMessenger(address messenger_) external onlyOwner {
        if (messenger_ == address(0)) revert ZeroAddress();
        messenger = messenger_;
        emit MessengerUpdated(messenger_);
    }

    /// @notice Escrows `o.giveAmount` of `o.giveToken` from the maker (native: msg.value) and records the order.
    function createOrder(Order calldata o) external payable nonReentrant returns (bytes32 orderId) {
        if (o.maker != msg.sender) revert NotMaker(msg.sender);
        if (o.giveChainId != block.chainid) revert WrongChain(o.giveChainId);
        if (o.giveAmount == 0 || o.takeAmount == 0) revert ZeroAmount();
        if (o.receiver == address(0) || o.refundTo == address(0) || o.orderAuthorityDst == address(0)) revert ZeroAddress();
        orderId = keccak256(abi.encode(o));
        GiveState storage s = _orders[orderId];
        if (s.status != NOT_SET) revert WrongGiveStatus(orderId, s.status);
        (s.status, s.token, s.amount, s.refundTo) = (CREATED, o.giveToken, o.giveAmount, o.refundTo);

        if (o.giveToken == address(0)) {
            if (msg.value != o.giveAmount) revert WrongValue(o.giveAmount, msg.value);
        } else {
            if (msg.value != 0) revert WrongValue(0, msg.value);
            IERC20 token = IERC20(o.giveToken);
            uint256 before = token.balanceOf(address(this));
            token.safeTransferFrom(msg.sender, address(this), o.giveAmount);
            uint256 received = token.balanceOf(address(this)) - before;
            if (received != o.giveAmount) revert ReceivedAmountMismatch(o.giveAmount, received);
        }
        emit CreatedOrder(orderId, o);
    }

    /// @notice Pays the escrow to `beneficiary` (the solver that fulfilled the order on the destination).
    function claimUnlock(bytes32 orderId, address beneficiary) external onlyMessenger nonReentrant {
        if (beneficiary == address(0)) revert ZeroAddress();
        (address token, uint256 amount) = _close(orderId, CLAIMED_UNLOCK);
        _pay(token, beneficiary, amount);
        emit ClaimedUnlock(orderId, beneficiary, amount);
    }

    /// @notice Refunds the escrow to the order's `refundTo` (the order was cancelled on the destination).
    function claimCancel(bytes32 orderId) external onlyMessenger nonReentrant {
        address refundTo = _orders[orderId].refundTo;
        (address token, uint256 amount) = _close(orderId, CLAIMED_CANCEL);
        _pay(token, refundTo, amount);
        emit ClaimedOrderCancel(orderId, refundTo, amount);
    }

    /// @notice 0 NotSet, 1 Created, 2 ClaimedUnlock, 3 ClaimedCancel.
    function giveStatus(bytes32 orderId) external view returns (uint8) {
        return _orders[orderId].status;
    }

    /// @dev Created -> `status`, before any payment (checks-effects-interactions).
    function _close(bytes32 orderId, uint8 status) private returns (address token, uint256 amount) {
        GiveState storage s = _orders[orderId];
        if (s.status != CREATED) revert WrongGiveStatus(orderId, s.status);
        s.status = status;
        return (s.token, s.amount);
    }

    function _pay(address token, address to, uint256 amount) private {
        if (token == address(0)) Address.sendValue(payable(to), amount);
        else IERC20(token).safeTransfer(to, amount);
    }
}
