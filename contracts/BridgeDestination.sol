// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {DlnOrderLib} from "./DlnOrderLib.sol";
import {DeBridgeGateStandIn} from "./DeBridgeGateStandIn.sol";

/// @title BridgeDestination
/// @notice The destination side of the local DLN stand-in (ours; DLN's DlnDestination is BUSL and was read for
/// behaviour only), with DlnDestination's function signatures, events, errors and `takeOrders` state, so calldata
/// built for DLN (the cancel-tx of DLN's API) runs here unchanged:
///   fulfillOrder(Order, uint256 fulfillAmount, bytes32 orderId, bytes permit, address unlockAuthority) payable
///   sendEvmUnlock(bytes32 orderId, address beneficiary, uint256 executionFee) payable
///   sendEvmOrderCancel(Order, address cancelBeneficiary, uint256 executionFee) payable            (0xd38d9626)
///   sendSolanaOrderCancel(Order, bytes32 cancelBeneficiary, uint256 executionFee, uint64, uint64) payable (0x9327145d)
/// A solver fulfils an order by paying `takeAmount` of `takeTokenAddress` from its own balance straight to
/// `receiverDst` (the receiver sees an ordinary ERC-20 Transfer or native credit), then asks for its escrow on the
/// source with `sendEvmUnlock`. While nobody fulfilled an order, its `orderAuthorityAddressDst` may cancel it and name
/// the beneficiary of the refund on the source. Unlocks and cancels are messages: msg.value goes to the chain's
/// DeBridgeGate stand-in (`deBridgeGate()`), which charges DeBridgeGate's messaging fee; the local solver relays the
/// events below to BridgeSource as deBridge's messaging would.
/// Holds no funds, has no owner and no storage set at construction (the gate is an immutable): its runtime code can be
/// placed at DLN's address with anvil_setCode.
/// Not reproduced: take patches, permits, external calls, batch unlocks, Solana unlocks, subscription ids.
contract BridgeDestination is ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// DLN's chain id of Solana (its "SOLANA" chain engine); every other give chain is taken as EVM.
    uint256 public constant SOLANA_CHAIN_ID = 7565164;
    /// DLN's divider of native amounts sent to Solana (8 decimals there).
    uint256 public constant NATIVE_AMOUNT_DIVIDER_FOR_TRANSFER_TO_SOLANA = 1e10;

    /// DLN's OrderTakeStatus.
    enum OrderTakeStatus {
        NotSet,
        Fulfilled,
        SentUnlock,
        SentCancel
    }

    /// DLN's OrderTakeState (`takeOrders(orderId)` has the same getter).
    struct OrderTakeState {
        OrderTakeStatus status;
        address takerAddress;
        uint32 giveChainId;
        uint256 bigGiveChainId;
    }

    /// @notice The messaging gate unlocks and cancels are sent through (DlnBase's `deBridgeGate()`).
    DeBridgeGateStandIn public immutable deBridgeGate;

    mapping(bytes32 => OrderTakeState) public takeOrders;

    // DLN's errors.
    error WrongChain();
    error MismatchedOrderId();
    error IncorrectOrderStatus();
    error Unauthorized();
    error MismatchTakerAmount();
    error MismatchNativeTakerAmount();
    error AllowOnlyForBeneficiary(bytes expectedBeneficiary);
    error TransferAmountNotCoverFees();
    error ZeroAddress();
    // The gate's, bubbling up through the calls here.
    error WrongChainTo();
    // Ours: what the stand-in does not do.
    error PermitNotSupported();
    error ExternalCallNotSupported();

    // DLN's events.
    event FulfilledOrder(DlnOrderLib.Order order, bytes32 orderId, address sender, address unlockAuthority);
    event SentOrderCancel(DlnOrderLib.Order order, bytes32 orderId, bytes cancelBeneficiary, bytes32 submissionId);
    event SentOrderUnlock(bytes32 orderId, bytes beneficiary, bytes32 submissionId);

    constructor(DeBridgeGateStandIn gate) {
        if (address(gate) == address(0)) revert ZeroAddress();
        deBridgeGate = gate;
    }

    /// @notice DLN's order id: keccak256 of the order's packed encoding.
    function getOrderId(DlnOrderLib.Order memory order) external pure returns (bytes32) {
        return DlnOrderLib.getOrderId(order);
    }

    /// @notice Pays `_fulFillAmount` (= takeAmount) of the take token from the caller directly to `receiverDst`
    /// (native: msg.value, forwarded) and makes `_unlockAuthority` the order's taker (who may send the unlock).
    function fulfillOrder(
        DlnOrderLib.Order memory _order,
        uint256 _fulFillAmount,
        bytes32 _orderId,
        bytes calldata _permitEnvelope,
        address _unlockAuthority
    ) external payable nonReentrant {
        if (_order.takeChainId != block.chainid) revert WrongChain();
        bytes32 orderId = DlnOrderLib.getOrderId(_order);
        if (orderId != _orderId) revert MismatchedOrderId();
        OrderTakeState storage s = takeOrders[orderId];
        if (s.status != OrderTakeStatus.NotSet) revert IncorrectOrderStatus();
        if (_order.allowedTakerDst.length > 0 && _toAddress(_order.allowedTakerDst) != _unlockAuthority) revert Unauthorized();
        if (_fulFillAmount != _order.takeAmount) revert MismatchTakerAmount();
        if (_permitEnvelope.length != 0) revert PermitNotSupported();
        if (_order.externalCall.length != 0) revert ExternalCallNotSupported();

        s.status = OrderTakeStatus.Fulfilled;
        s.takerAddress = _unlockAuthority;
        if (_order.giveChainId < type(uint32).max) s.giveChainId = uint32(_order.giveChainId);
        else s.bigGiveChainId = _order.giveChainId;

        address token = _toAddress(_order.takeTokenAddress);
        address receiver = _toAddress(_order.receiverDst);
        if (token == address(0)) {
            if (msg.value != _fulFillAmount) revert MismatchNativeTakerAmount();
            Address.sendValue(payable(receiver), _fulFillAmount);
        } else {
            IERC20(token).safeTransferFrom(msg.sender, receiver, _fulFillAmount);
        }
        emit FulfilledOrder(_order, orderId, msg.sender, _unlockAuthority);
    }

    /// @notice The taker asks the source to pay the escrow to `_beneficiary` (relayed as `claimUnlock`); msg.value
    /// pays the gate's messaging fee and `_executionFee`.
    function sendEvmUnlock(bytes32 _orderId, address _beneficiary, uint256 _executionFee) external payable nonReentrant {
        if (_beneficiary == address(0)) revert ZeroAddress();
        OrderTakeState storage s = takeOrders[_orderId];
        if (s.status != OrderTakeStatus.Fulfilled) revert IncorrectOrderStatus();
        if (s.takerAddress != msg.sender) revert Unauthorized();
        uint256 giveChainId = s.giveChainId > 0 ? uint256(s.giveChainId) : s.bigGiveChainId;
        if (giveChainId == SOLANA_CHAIN_ID) revert WrongChain();
        s.status = OrderTakeStatus.SentUnlock;
        bytes32 submissionId = _send(giveChainId, abi.encodePacked(_beneficiary), _executionFee, abi.encode(_orderId, _beneficiary));
        emit SentOrderUnlock(_orderId, abi.encodePacked(_beneficiary), submissionId);
    }

    /// @notice The order's authority cancels an order nobody fulfilled (from then on nobody can) and names who gets the
    /// escrow back on the source (relayed as `claimCancel(orderId, _cancelBeneficiary)`); msg.value pays the gate's
    /// messaging fee and `_executionFee`.
    function sendEvmOrderCancel(
        DlnOrderLib.Order memory _order,
        address _cancelBeneficiary,
        uint256 _executionFee
    ) external payable nonReentrant {
        if (_order.giveChainId == SOLANA_CHAIN_ID) revert WrongChain();
        bytes32 orderId = _authorize(_order);
        if (_order.allowedCancelBeneficiarySrc.length > 0 && _toAddress(_order.allowedCancelBeneficiarySrc) != _cancelBeneficiary)
            revert AllowOnlyForBeneficiary(_order.allowedCancelBeneficiarySrc);
        _markCancelled(orderId);
        bytes memory beneficiary = abi.encodePacked(_cancelBeneficiary);
        bytes32 submissionId = _send(_order.giveChainId, beneficiary, _executionFee, abi.encode(orderId, _cancelBeneficiary));
        emit SentOrderCancel(_order, orderId, beneficiary, submissionId);
    }

    /// @notice `sendEvmOrderCancel` for an order created on Solana (giveChainId 7565164): the beneficiary is a 32-byte
    /// key, and msg.value must also cover the two Solana instruction rewards, as DLN checks it:
    /// value >= fix and value / 1e10 >= (fix + transferFee + executionFee) / 1e10 + reward1 + reward2, with the gate's
    /// global fees.
    function sendSolanaOrderCancel(
        DlnOrderLib.Order memory _order,
        bytes32 _cancelBeneficiary,
        uint256 _executionFee,
        uint64 _initWalletIfNeededInstructionReward,
        uint64 _claimCancelInstructionReward
    ) external payable nonReentrant {
        _validateSolanaRewards(msg.value, _executionFee, _initWalletIfNeededInstructionReward, _claimCancelInstructionReward);
        if (_order.giveChainId != SOLANA_CHAIN_ID) revert WrongChain();
        bytes32 orderId = _authorize(_order);
        if (
            _order.allowedCancelBeneficiarySrc.length > 0 &&
            (_order.allowedCancelBeneficiarySrc.length != DlnOrderLib.SOLANA_ADDRESS_LENGTH ||
                bytes32(_order.allowedCancelBeneficiarySrc) != _cancelBeneficiary)
        ) revert AllowOnlyForBeneficiary(_order.allowedCancelBeneficiarySrc);
        _markCancelled(orderId);
        bytes memory beneficiary = abi.encodePacked(_cancelBeneficiary);
        bytes32 submissionId = _send(
            _order.giveChainId,
            beneficiary,
            _executionFee,
            abi.encode(orderId, _cancelBeneficiary, _initWalletIfNeededInstructionReward, _claimCancelInstructionReward)
        );
        emit SentOrderCancel(_order, orderId, beneficiary, submissionId);
    }

    /// @dev The checks both cancels start with, in DLN's order: the order is for this chain, the caller is its authority.
    function _authorize(DlnOrderLib.Order memory _order) private view returns (bytes32 orderId) {
        if (_order.takeChainId != block.chainid) revert WrongChain();
        orderId = DlnOrderLib.getOrderId(_order);
        bytes memory authority = _order.orderAuthorityAddressDst;
        if (authority.length != DlnOrderLib.EVM_ADDRESS_LENGTH || _toAddress(authority) != msg.sender) revert Unauthorized();
    }

    /// @dev NotSet -> SentCancel (nobody fulfilled or cancelled it before).
    function _markCancelled(bytes32 orderId) private {
        OrderTakeState storage s = takeOrders[orderId];
        if (s.status != OrderTakeStatus.NotSet) revert IncorrectOrderStatus();
        s.status = OrderTakeStatus.SentCancel;
    }

    function _send(
        uint256 chainIdTo,
        bytes memory fallbackAddress,
        uint256 executionFee,
        bytes memory data
    ) private returns (bytes32 submissionId) {
        (submissionId, ) = deBridgeGate.send{value: msg.value}(chainIdTo, fallbackAddress, executionFee, data);
    }

    function _validateSolanaRewards(uint256 value, uint256 executionFee, uint64 reward1, uint64 reward2) private view {
        uint256 fixFee = deBridgeGate.globalFixedNativeFee();
        if (value < fixFee) revert TransferAmountNotCoverFees();
        uint256 transferFee = (uint256(deBridgeGate.globalTransferFeeBps()) * (value - fixFee)) / 10000;
        uint256 divider = NATIVE_AMOUNT_DIVIDER_FOR_TRANSFER_TO_SOLANA;
        if (value / divider < (fixFee + transferFee + executionFee) / divider + reward1 + reward2) revert TransferAmountNotCoverFees();
    }

    /// @dev A 20-byte address field (DLN's BytesLib.toAddress reads the first 20 bytes; shorter is refused here).
    function _toAddress(bytes memory b) private pure returns (address a) {
        if (b.length < 20) revert DlnOrderLib.WrongAddressLength();
        assembly {
            a := shr(96, mload(add(b, 32)))
        }
    }
}
