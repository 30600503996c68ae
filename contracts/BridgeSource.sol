// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {DlnOrderLib} from "./DlnOrderLib.sol";

/// @title BridgeSource
/// @notice The source side of the local DLN stand-in (ours; DLN's DlnSource is BUSL and was read for behaviour only).
/// It takes DLN's `Order` (contracts/DlnOrderLib.sol) and ids it as DLN does (`DlnOrderLib.getOrderId`, packed
/// encoding), emits DLN's events and keeps DLN's `giveOrders` state, behind a simpler entry than DLN's
/// `createSaltedOrder(OrderCreation, …)`: `createOrder(order)` with the whole order, whose `makerSrc` must be the
/// transaction's origin (DLN sets makerSrc = tx.origin) while the tokens come from msg.sender (the payer, or a pre-swap
/// router the payer called). The escrow later goes to the solver (`claimUnlock`, once the destination saw the order
/// fulfilled) or, with the native creation fee, to the cancel beneficiary the order authority named on the
/// destination (`claimCancel`). Both claims come from `messenger`, which stands in for deBridge's cross-chain messaging:
/// it relays the destination's SentOrderUnlock / SentOrderCancel.
/// Not reproduced: DLN's percent fee, affiliate fees, patches, permits and external calls.
contract BridgeSource is Ownable, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// DLN's OrderGiveStatus.
    enum OrderGiveStatus {
        NotSet,
        Created,
        ClaimedUnlock,
        ClaimedCancel
    }

    /// DLN's GiveOrderState (`giveOrders(orderId)` has the same getter).
    struct GiveOrderState {
        OrderGiveStatus status;
        uint160 giveTokenAddress;
        uint88 nativeFixFee;
        uint48 takeChainId;
        uint208 percentFee;
        uint256 giveAmount;
        address affiliateBeneficiary;
        uint256 affiliateAmount;
    }

    error NotMessenger(address caller);
    /// makerSrc is not the transaction's origin (the payer who signed it).
    error NotMaker(address origin);
    error ZeroAmount();
    error ZeroAddress();
    error WrongChain();
    error ExternalCallNotSupported();
    /// DLN's: msg.value is not giveAmount + the fixed fee (native order).
    error MismatchNativeGiveAmount();
    /// DLN's: msg.value is not the fixed fee (token order).
    error WrongFixedFee(uint256 received, uint256 actual);
    /// The order is not in the status the call needs (`status` is its current one).
    error WrongGiveStatus(bytes32 orderId, OrderGiveStatus status);
    /// The token moved another amount than `giveAmount` (a fee-on-transfer token would leave the escrow short).
    error ReceivedAmountMismatch(uint256 expected, uint256 received);

    event CreatedOrder(
        DlnOrderLib.Order order,
        bytes32 orderId,
        bytes affiliateFee,
        uint256 nativeFixFee,
        uint256 percentFee,
        uint32 referralCode,
        bytes metadata
    );
    event ClaimedUnlock(bytes32 orderId, address beneficiary, uint256 giveAmount, address giveTokenAddress);
    event ClaimedOrderCancel(bytes32 orderId, address beneficiary, uint256 paidAmount, address giveTokenAddress);
    event MessengerUpdated(address indexed messenger);
    event GlobalFixedNativeFeeUpdated(uint88 oldGlobalFixedNativeFee, uint88 newGlobalFixedNativeFee);

    /// @notice DLN's creation flat fee in the native coin, paid on top of the order (refunded by a cancel).
    uint88 public globalFixedNativeFee;
    /// @notice The only account that may relay unlocks and cancels from the destinations.
    address public messenger;
    mapping(bytes32 => GiveOrderState) public giveOrders;

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

    function setGlobalFixedNativeFee(uint88 fee) external onlyOwner {
        emit GlobalFixedNativeFeeUpdated(globalFixedNativeFee, fee);
        globalFixedNativeFee = fee;
    }

    /// @notice DLN's order id: keccak256 of the order's packed encoding.
    function getOrderId(DlnOrderLib.Order memory order) external pure returns (bytes32) {
        return DlnOrderLib.getOrderId(order);
    }

    /// @notice Escrows `o.giveAmount` of `o.giveTokenAddress` from msg.sender (native: msg.value, with the fixed fee on
    /// top; a token: msg.value = the fixed fee) and records the order. `o.makerSrc` must be tx.origin.
    function createOrder(DlnOrderLib.Order calldata o) external payable nonReentrant returns (bytes32 orderId) {
        if (keccak256(o.makerSrc) != keccak256(abi.encodePacked(tx.origin))) revert NotMaker(tx.origin);
        if (o.giveChainId != block.chainid || o.takeChainId == block.chainid) revert WrongChain();
        if (o.giveAmount == 0 || o.takeAmount == 0) revert ZeroAmount();
        if (
            o.giveTokenAddress.length != DlnOrderLib.EVM_ADDRESS_LENGTH ||
            o.givePatchAuthoritySrc.length != DlnOrderLib.EVM_ADDRESS_LENGTH ||
            o.takeTokenAddress.length == 0 ||
            o.receiverDst.length == 0 ||
            o.orderAuthorityAddressDst.length == 0 ||
            (o.allowedCancelBeneficiarySrc.length != 0 && o.allowedCancelBeneficiarySrc.length != DlnOrderLib.EVM_ADDRESS_LENGTH)
        ) revert DlnOrderLib.WrongAddressLength();
        if (o.externalCall.length != 0) revert ExternalCallNotSupported();
        if (o.takeChainId > type(uint48).max) revert WrongChain();

        orderId = DlnOrderLib.getOrderId(o);
        GiveOrderState storage s = giveOrders[orderId];
        if (s.status != OrderGiveStatus.NotSet) revert WrongGiveStatus(orderId, s.status);
        address token = address(bytes20(o.giveTokenAddress));
        uint88 fixFee = globalFixedNativeFee;
        s.status = OrderGiveStatus.Created;
        s.giveTokenAddress = uint160(token);
        s.nativeFixFee = fixFee;
        s.takeChainId = uint48(o.takeChainId);
        s.giveAmount = o.giveAmount;

        if (token == address(0)) {
            if (msg.value != o.giveAmount + fixFee) revert MismatchNativeGiveAmount();
        } else {
            if (msg.value != fixFee) revert WrongFixedFee(msg.value, fixFee);
            IERC20 t = IERC20(token);
            uint256 before = t.balanceOf(address(this));
            t.safeTransferFrom(msg.sender, address(this), o.giveAmount);
            uint256 received = t.balanceOf(address(this)) - before;
            if (received != o.giveAmount) revert ReceivedAmountMismatch(o.giveAmount, received);
        }
        emit CreatedOrder(o, orderId, "", fixFee, 0, 0, "");
    }

    /// @notice Pays the escrow to `beneficiary` (the solver that fulfilled the order on the destination); the fixed
    /// fee stays here, as DLN keeps it.
    function claimUnlock(bytes32 orderId, address beneficiary) external onlyMessenger nonReentrant {
        if (beneficiary == address(0)) revert ZeroAddress();
        GiveOrderState storage s = _close(orderId, OrderGiveStatus.ClaimedUnlock);
        address token = address(s.giveTokenAddress);
        _pay(token, beneficiary, s.giveAmount);
        emit ClaimedUnlock(orderId, beneficiary, s.giveAmount, token);
    }

    /// @notice Refunds the escrow and the native fixed fee to `beneficiary`, the cancel beneficiary the order's
    /// authority named on the destination (DLN: `claimCancel(orderId, beneficiary)`).
    function claimCancel(bytes32 orderId, address beneficiary) external onlyMessenger nonReentrant {
        if (beneficiary == address(0)) revert ZeroAddress();
        GiveOrderState storage s = _close(orderId, OrderGiveStatus.ClaimedCancel);
        address token = address(s.giveTokenAddress);
        _pay(token, beneficiary, s.giveAmount);
        if (s.nativeFixFee > 0) Address.sendValue(payable(beneficiary), s.nativeFixFee);
        emit ClaimedOrderCancel(orderId, beneficiary, s.giveAmount, token);
    }

    /// @dev Created -> `status`, before any payment (checks-effects-interactions).
    function _close(bytes32 orderId, OrderGiveStatus status) private returns (GiveOrderState storage s) {
        s = giveOrders[orderId];
        if (s.status != OrderGiveStatus.Created) revert WrongGiveStatus(orderId, s.status);
        s.status = status;
    }

    function _pay(address token, address to, uint256 amount) private {
        if (token == address(0)) Address.sendValue(payable(to), amount);
        else IERC20(token).safeTransfer(to, amount);
    }
}
