// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";

/// @title DeBridgeGateStandIn
/// @notice The part of deBridge's DeBridgeGate the local bridge needs: the messaging fee a cross-chain message pays in
/// the native coin of the chain it is sent from. Ours (MIT), written from DeBridgeGate's public interface and
/// documented behaviour (debridge-contracts-v1 `IDeBridgeGate.sol`, `DeBridgeGate._send`); no code of it is copied.
///
/// Same getters and ABI as DeBridgeGate, so the same client code reads both: `globalFixedNativeFee()`,
/// `globalTransferFeeBps()`, `getChainToConfig(chainId)` -> (fixedNativeFee, isSupported, transferFeeBps) and
/// `feeDiscount(sender)` -> (discountFixBps, discountTransferBps). `send` takes a native message (what DlnDestination
/// sends for unlocks and cancels) and charges DeBridgeGate's fee for it:
///
///   fix         = route.fixedNativeFee, or globalFixedNativeFee when that is 0; minus the sender's discountFixBps
///   value < fix -> TransferAmountNotCoverFees()
///   transferFee = (route.transferFeeBps, or globalTransferFeeBps when 0) * (value - fix) / 10000; minus discountTransferBps
///   executionFee is capped at value - fix - transferFee (what the keeper on the other chain is paid)
///
/// The whole msg.value stays here: the fees are the gate's, and what is left would be bridged to the receiver, which
/// locally nobody collects (on DeBridgeGate too an overpaid message is not refunded). Delivery is not done here: the
/// local solver relays the sender's own event (SentOrderCancel, SentOrderUnlock) as deBridge's validators would.
contract DeBridgeGateStandIn is Ownable {
    uint256 public constant BPS_DENOMINATOR = 10000;

    /// DeBridgeGate's per-route configuration (keyed by the chain a message goes to).
    struct ChainSupportInfo {
        uint256 fixedNativeFee;
        bool isSupported;
        uint16 transferFeeBps;
    }

    /// DeBridgeGate's per-sender discount.
    struct DiscountInfo {
        uint16 discountFixBps;
        uint16 discountTransferBps;
    }

    /// Fixed fee in the native coin, used for routes whose own fixedNativeFee is 0.
    uint256 public globalFixedNativeFee;
    /// Transfer fee in basis points of (value - fixed fee), used for routes whose own transferFeeBps is 0.
    uint16 public globalTransferFeeBps;
    mapping(uint256 => ChainSupportInfo) public getChainToConfig;
    mapping(address => DiscountInfo) public feeDiscount;
    /// Messages sent so far (part of each submission id).
    uint256 public nonce;
    /// Fixed and transfer fees kept (the rest of each msg.value is kept too, see above).
    uint256 public collectedFees;

    error TransferAmountNotCoverFees();
    error WrongChainTo();
    error WrongArgument();

    /// What a message paid (DeBridgeGate's Sent event carries its own FeeParams likewise).
    struct FeeParams {
        uint256 fixFee;
        uint256 transferFee;
        uint256 executionFee;
    }

    event Sent(
        bytes32 submissionId,
        uint256 indexed chainIdTo,
        address indexed nativeSender,
        bytes receiver,
        uint256 amount,
        FeeParams fees,
        bytes data
    );
    event FixedNativeFeeUpdated(uint256 globalFixedNativeFee, uint256 globalTransferFeeBps);
    event ChainSupportUpdated(uint256 chainId, uint256 fixedNativeFee, bool isSupported, uint16 transferFeeBps);
    event FeeDiscountUpdated(address indexed sender, uint16 discountFixBps, uint16 discountTransferBps);

    constructor(address owner_, uint256 globalFixedNativeFee_, uint16 globalTransferFeeBps_) Ownable(owner_) {
        if (globalTransferFeeBps_ > BPS_DENOMINATOR) revert WrongArgument();
        globalFixedNativeFee = globalFixedNativeFee_;
        globalTransferFeeBps = globalTransferFeeBps_;
        emit FixedNativeFeeUpdated(globalFixedNativeFee_, globalTransferFeeBps_);
    }

    /// @notice DeBridgeGate's setter of the global fees.
    function updateGlobalFee(uint256 _globalFixedNativeFee, uint16 _globalTransferFeeBps) external onlyOwner {
        if (_globalTransferFeeBps > BPS_DENOMINATOR) revert WrongArgument();
        globalFixedNativeFee = _globalFixedNativeFee;
        globalTransferFeeBps = _globalTransferFeeBps;
        emit FixedNativeFeeUpdated(_globalFixedNativeFee, _globalTransferFeeBps);
    }

    /// @notice Routes a message may go to, with their own fees (0 = the global one).
    function updateChainSupport(uint256[] calldata _chainIds, ChainSupportInfo[] calldata _chainSupportInfo) external onlyOwner {
        if (_chainIds.length != _chainSupportInfo.length) revert WrongArgument();
        for (uint256 i = 0; i < _chainIds.length; ++i) {
            ChainSupportInfo calldata c = _chainSupportInfo[i];
            if (c.transferFeeBps > BPS_DENOMINATOR) revert WrongArgument();
            getChainToConfig[_chainIds[i]] = c;
            emit ChainSupportUpdated(_chainIds[i], c.fixedNativeFee, c.isSupported, c.transferFeeBps);
        }
    }

    /// @notice DeBridgeGate's discount of a sender's fees (basis points off the fixed and the transfer fee).
    function updateFeeDiscount(address _address, uint16 _discountFixBps, uint16 _discountTransferBps) external onlyOwner {
        if (_address == address(0) || _discountFixBps > BPS_DENOMINATOR || _discountTransferBps > BPS_DENOMINATOR) revert WrongArgument();
        feeDiscount[_address] = DiscountInfo(_discountFixBps, _discountTransferBps);
        emit FeeDiscountUpdated(_address, _discountFixBps, _discountTransferBps);
    }

    /// @notice Pays out what the gate holds.
    function withdrawFee(address payable to) external onlyOwner {
        Address.sendValue(to, address(this).balance);
    }

    /// @notice Sends a native-coin message to `_chainIdTo`: msg.value pays DeBridgeGate's fee (see the contract's
    /// notice) and the keeper's `_executionFee` (capped at what the fee leaves). Returns the submission id and the
    /// execution fee after the cap.
    function send(
        uint256 _chainIdTo,
        bytes calldata _receiver,
        uint256 _executionFee,
        bytes calldata _data
    ) external payable returns (bytes32 submissionId, uint256 executionFee) {
        FeeParams memory fees;
        (fees.fixFee, fees.transferFee) = feesOf(msg.sender, _chainIdTo, msg.value);
        uint256 amountAfterFee = msg.value - fees.fixFee - fees.transferFee;
        fees.executionFee = _executionFee > amountAfterFee ? amountAfterFee : _executionFee;
        collectedFees += fees.fixFee + fees.transferFee;
        submissionId = keccak256(abi.encodePacked(block.chainid, _chainIdTo, nonce++, msg.sender, _receiver, _data));
        emit Sent(submissionId, _chainIdTo, msg.sender, _receiver, msg.value, fees, _data);
        return (submissionId, fees.executionFee);
    }

    /// @notice The fixed and transfer fee `sender` pays for a message of `value` to `chainIdTo`; reverts as `send`
    /// does when the route is not supported or the value does not cover the fixed fee.
    function feesOf(address sender, uint256 chainIdTo, uint256 value) public view returns (uint256 fixFee, uint256 transferFee) {
        ChainSupportInfo memory route = getChainToConfig[chainIdTo];
        if (!route.isSupported) revert WrongChainTo();
        DiscountInfo memory discount = feeDiscount[sender];
        fixFee = _discounted(route.fixedNativeFee == 0 ? globalFixedNativeFee : route.fixedNativeFee, discount.discountFixBps);
        if (value < fixFee) revert TransferAmountNotCoverFees();
        uint256 bps = route.transferFeeBps == 0 ? globalTransferFeeBps : route.transferFeeBps;
        transferFee = _discounted((bps * (value - fixFee)) / BPS_DENOMINATOR, discount.discountTransferBps);
        if (value < fixFee + transferFee) revert TransferAmountNotCoverFees();
    }

    function _discounted(uint256 amount, uint16 discountBps) private pure returns (uint256) {
        return amount - (amount * discountBps) / BPS_DENOMINATOR;
    }
}
