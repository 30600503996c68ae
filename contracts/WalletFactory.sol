// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {ForwarderWallet, IForwarderWalletErrors} from "./ForwarderWallet.sol";

/// @title WalletFactory
/// @notice Computes and deploys (CREATE2) one forwarder wallet per (salt, payout): a plain EIP-1167 clone of
/// `implementation` under the salt keccak256(abi.encode(salt, payout)), so the address commits to the payout.
/// A settler deploys wallets (only those without code) and sweeps them in one transaction. Funds leave a wallet only
/// for its payout and an allow-listed fee recipient, or, on the owner's call alone, an exact amount for an address the
/// owner chooses (`returnFunds`: held funds, e.g. of a sanctioned sender, returned).
/// Off-chain: address = CREATE2(factory, keccak256(abi.encode(salt, payout)), keccak256(cloneInitCode(implementation))),
/// and `implementation` is the factory's first CREATE (nonce 1), i.e. computable from the factory address alone.
///
/// Gas: a batch sweeps every wallet to the factory and pays each (token, payout) and each (token, fee recipient)
/// once per run of consecutive wallets sharing it (callers group and order them: chains/factory-calls.ts), instead
/// of two transfers per wallet; the factory holds nothing once the transaction ends. A single sweep pays the payout
/// and the fee recipient straight from the wallet (one transfer fewer than through the factory).
contract WalletFactory is Ownable, ReentrancyGuardTransient, IForwarderWalletErrors {
    using SafeERC20 for IERC20;

    /// @notice One wallet of a batch: the wallet of (salt, payout), `fee` of its balance to its group's fee recipient.
    struct Sweep {
        bytes32 salt;
        address payout;
        uint256 fee;
    }

    /// @notice The wallets of a batch that share a token and a fee recipient (each named once: less calldata).
    struct SweepGroup {
        address token;
        address feeRecipient;
        Sweep[] sweeps;
    }

    /// @dev A sum owed within a batch: `amount` of `token` to `to`, paid when the run of requests sharing it ends.
    struct Owed {
        address token;
        address to;
        uint256 amount;
    }

    error NotSettler(address account);
    error FeeRecipientNotAllowed(address feeRecipient);
    error ZeroAddress();
    error UnexpectedNative();
    error InvalidRecipient(address to);

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
    event FundsReturned(
        address indexed wallet,
        address indexed token,
        address indexed to,
        uint256 amount,
        address payout,
        bytes32 salt
    );

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

    /// @notice Native coin only arrives here from wallets swept within a batch; anything else would be stranded.
    receive() external payable {
        if (!_reentrancyGuardEntered()) revert UnexpectedNative();
    }

    /// @notice The deposit address of (salt, payout), deployed or not.
    function computeAddress(bytes32 salt, address payout) public view returns (address) {
        return Clones.predictDeterministicAddress(implementation, _walletSalt(salt, payout));
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
    ) external onlySettler nonReentrant returns (address wallet, uint256 amount) {
        return _deployAndSweep(salt, payout, token, fee, feeRecipient);
    }

    /// @notice Several `deployAndSweep`s in one atomic transaction, one Swept event per wallet. The wallets are swept
    /// to the factory, which pays each run of consecutive wallets with the same (token, payout), and each run with the
    /// same (token, fee recipient), in one transfer: order the groups by token and each group's sweeps by payout.
    function deployAndSweepBatch(SweepGroup[] calldata groups) external onlySettler nonReentrant {
        Owed memory owedPayout;
        Owed memory owedFee;
        for (uint256 g = 0; g < groups.length; ++g) {
            SweepGroup calldata group = groups[g];
            (address token, address feeRecipient) = (group.token, group.feeRecipient);
            bool allowed;
            for (uint256 i = 0; i < group.sweeps.length; ++i) {
                Sweep calldata r = group.sweeps[i];
                (address payout, uint256 fee) = (r.payout, r.fee);
                if (fee > 0 && !allowed) {
                    if (!isFeeRecipient[feeRecipient]) revert FeeRecipientNotAllowed(feeRecipient);
                    allowed = true;
                }
                address wallet = _deploy(r.salt, payout);
                uint256 balance = ForwarderWallet(payable(wallet)).sweepToFactory(token);
                if (fee > balance) revert FeeExceedsBalance(fee, balance);
                uint256 amount;
                unchecked {
                    amount = balance - fee;
                }
                emit Swept(wallet, token, payout, amount, fee, feeRecipient);
                _owe(owedPayout, token, payout, amount);
                if (fee > 0) _owe(owedFee, token, feeRecipient, fee);
            }
        }
        _pay(owedPayout);
        _pay(owedFee);
    }

    /// @notice Sends exactly `amount` of `token` (native coin when zero) from the wallet of (salt, payout), deployed
    /// first if needed, to `to`, an address the owner chooses: how held funds (e.g. from a sanctioned sender) are
    /// returned. An exact amount, not the whole balance: the wallet may also hold clean deposits, which stay for the
    /// payout. Owner only; settlers cannot call it. It gives the owner no new power: it can already make any address
    /// a settler (`setSettler`) or a fee recipient (`setFeeRecipient`) and sweep a whole balance into the fee.
    function returnFunds(
        bytes32 salt,
        address payout,
        address token,
        address to,
        uint256 amount
    ) external onlyOwner nonReentrant returns (address wallet) {
        if (to == address(0)) revert ZeroAddress();
        // Inside this call the factory's receive() takes the native coin, and nothing would ever pay it out again.
        if (to == address(this)) revert InvalidRecipient(to);
        wallet = _deploy(salt, payout);
        ForwarderWallet(payable(wallet)).transferOut(token, to, amount);
        emit FundsReturned(wallet, token, to, amount, payout, salt);
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

    /// @dev The CREATE2 salt of (salt, payout): keccak256(abi.encode(salt, payout)), in scratch space.
    function _walletSalt(bytes32 salt, address payout) private pure returns (bytes32 s) {
        assembly ("memory-safe") {
            mstore(0x00, salt)
            mstore(0x20, and(payout, 0xffffffffffffffffffffffffffffffffffffffff))
            s := keccak256(0x00, 0x40)
        }
    }

    function _deploy(bytes32 salt, address payout) private returns (address wallet) {
        if (payout == address(0)) revert ZeroAddress();
        bytes32 s = _walletSalt(salt, payout);
        wallet = Clones.predictDeterministicAddress(implementation, s);
        // EXTCODESIZE, not a blind CREATE2: a collision would burn the gas of the whole batch (anyone may deploy).
        if (wallet.code.length == 0) {
            Clones.cloneDeterministic(implementation, s);
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
        amount = ForwarderWallet(payable(wallet)).sweep(token, fee, feeRecipient, payout) - fee;
        emit Swept(wallet, token, payout, amount, fee, feeRecipient);
    }

    /// @dev Adds `amount` of `token` owed to `to`; what was owed to another (token, recipient) is paid first.
    function _owe(Owed memory owed, address token, address to, uint256 amount) private {
        if (owed.token != token || owed.to != to) {
            _pay(owed);
            (owed.token, owed.to) = (token, to);
        }
        owed.amount += amount;
    }

    /// @dev Pays what is owed and clears it. A native payout can run code, but every entry point is nonReentrant
    /// and what is owed lives in memory, so it can neither re-enter a sweep nor change what anyone is paid.
    function _pay(Owed memory owed) private {
        uint256 amount = owed.amount;
        if (amount == 0) return;
        owed.amount = 0;
        if (owed.token == address(0)) Address.sendValue(payable(owed.to), amount);
        else IERC20(owed.token).safeTransfer(owed.to, amount);
    }
}
