// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {ForwarderWallet, IForwarderWalletErrors} from "./ForwarderWallet.sol";

/// @title WalletFactory
/// @notice Computes and deploys (CREATE2) one forwarder wallet per (salt, payout): a clone of `implementation`
/// with `payout` as its immutable argument. A settler deploys a wallet and sweeps it in one transaction.
/// Off-chain: address = CREATE2(factory, salt, keccak256(cloneInitCode(implementation, payout))), and
/// `implementation` is the factory's first CREATE (nonce 1), i.e. computable from the factory address alone.
contract WalletFactory is Ownable, IForwarderWalletErrors {
    struct SweepRequest {
        bytes32 salt;
        address payout;
        address token;
        uint256 fee;
        address feeRecipient;
    }

    error NotSettler(address account);
    error FeeRecipientNotAllowed(address feeRecipient);
    error ZeroAddress();

    event WalletDeployed(address indexed wallet, address indexed payout, bytes32 salt);
    event Swept(
        address indexed wallet,
        address indexed token,
        address indexed payout,
        uint256 amount,
        uint256 fee,
        address feeRecipient
    );
    event SettlerUpdated(address indexed settler, bool allowed);
    event FeeRecipientUpdated(address indexed feeRecipient, bool allowed);

    /// @notice The forwarder wallet implementation every deposit address delegates to.
    address public immutable implementation;

    mapping(address => bool) public isSettler;
    mapping(address => bool) public isFeeRecipient;

    modifier onlySettler() {
        if (!isSettler[msg.sender]) revert NotSettler(msg.sender);
        _;
    }

    constructor(address owner_, address settler) Ownable(owner_) {
        implementation = address(new ForwarderWallet());
        if (settler != address(0)) {
            isSettler[settler] = true;
            emit SettlerUpdated(settler, true);
        }
    }

    /// @notice The deposit address of (salt, payout), deployed or not.
    function computeAddress(bytes32 salt, address payout) public view returns (address) {
        return Clones.predictDeterministicAddressWithImmutableArgs(implementation, abi.encodePacked(payout), salt);
    }

    /// @notice Deploys the wallet of (salt, payout) if it has no code yet. Anyone may call: the address already
    /// commits to the payout, deploying changes nothing about where its funds can go.
    function deploy(bytes32 salt, address payout) external returns (address wallet) {
        return _deploy(salt, payout);
    }

    /// @notice Deploys the wallet if needed and sweeps its whole balance of `token` (native coin when zero) to
    /// `payout`, minus `fee` sent to the allow-listed `feeRecipient`. `amount` is what the payout received.
    function deployAndSweep(
        bytes32 salt,
        address payout,
        address token,
        uint256 fee,
        address feeRecipient
    ) external onlySettler returns (address wallet, uint256 amount) {
        return _deployAndSweep(salt, payout, token, fee, feeRecipient);
    }

    /// @notice Several `deployAndSweep`s in one atomic transaction.
    function deployAndSweepBatch(SweepRequest[] calldata reqs) external onlySettler {
        for (uint256 i = 0; i < reqs.length; ++i) {
            SweepRequest calldata r = reqs[i];
            _deployAndSweep(r.salt, r.payout, r.token, r.fee, r.feeRecipient);
        }
    }

    function setSettler(address settler, bool allowed) external onlyOwner {
        if (settler == address(0)) revert ZeroAddress();
        isSettler[settler] = allowed;
        emit SettlerUpdated(settler, allowed);
    }

    function setFeeRecipient(address feeRecipient, bool allowed) external onlyOwner {
        if (feeRecipient == address(0)) revert ZeroAddress();
        isFeeRecipient[feeRecipient] = allowed;
        emit FeeRecipientUpdated(feeRecipient, allowed);
    }

    function _deploy(bytes32 salt, address payout) private returns (address wallet) {
        if (payout == address(0)) revert ZeroAddress();
        bytes memory args = abi.encodePacked(payout);
        wallet = Clones.predictDeterministicAddressWithImmutableArgs(implementation, args, salt);
        if (wallet.code.length == 0) {
            Clones.cloneDeterministicWithImmutableArgs(implementation, args, salt);
            emit WalletDeployed(wallet, payout, salt);
        }
    }

    function _deployAndSweep(
        bytes32 salt,
        address payout,
        address token,
        uint256 fee,
        address feeRecipient
    ) private returns (address wallet, uint256 amount) {
        if (fee > 0 && !isFeeRecipient[feeRecipient]) revert FeeRecipientNotAllowed(feeRecipient);
        wallet = _deploy(salt, payout);
        amount = ForwarderWallet(payable(wallet)).sweep(token, fee, feeRecipient);
        emit Swept(wallet, token, payout, amount, fee, feeRecipient);
    }
}
