// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {DlnOrderLib} from "./DlnOrderLib.sol";
import {BridgeSource} from "./BridgeSource.sol";

/// The local PriceOracle's read (contracts/PriceOracle.sol): USD, 18 decimals, (0, 0) when unknown.
interface IPriceOracleRead {
    function getPrice(string calldata symbol) external view returns (uint256 price, uint256 updatedAt);
}

/// @title BridgeRouterStandIn
/// @notice The pre-order swap of DLN's API, locally (ours, MIT). DLN's API sends an input that is not one of DLN's
/// reserve assets (USDC everywhere, the native coin where it is ETH) through DeBridgeRouter, which swaps it to a
/// reserve asset and creates the order with it; positive slippage goes to `srcChainRefundAddress`, and a cancelled
/// order refunds the reserve asset. This stand-in swaps into USDC from its own stock at the local PriceOracle's USD
/// prices (token: the price of its `symbol()`, USDT0 as USDT; native coin: of `nativeSymbol`), with no slippage, no
/// DEX and no fee, then creates the order on BridgeSource (the order's maker is still the payer: tx.origin) and sends any surplus
/// (what the swap gave above the order's giveAmount, e.g. after a price rise between quote and transaction) to
/// `refundTo`. The input stays here. When the swap gives less than giveAmount the call reverts, as a swap below its
/// minimum does.
/// Only immutables, no storage: its runtime code can be placed at DeBridgeRouter's address with anvil_setCode.
contract BridgeRouterStandIn is ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    BridgeSource public immutable source;
    IERC20Metadata public immutable usdc;
    IPriceOracleRead public immutable oracle;
    /// The oracle symbol of the chain's native coin, left-aligned ("" = native input not taken).
    bytes32 public immutable nativeSymbol;

    error ZeroAddress();
    error UnsupportedToken(address token);
    error NoPrice(string symbol);
    error WrongGiveToken();
    error WrongValue(uint256 minimum, uint256 sent);
    /// The swap gives less than the order escrows.
    error InsufficientOutput(uint256 amountOut, uint256 needed);
    /// The router's USDC stock is short.
    error InsufficientLiquidity(uint256 available, uint256 needed);
    error ReceivedAmountMismatch(uint256 expected, uint256 received);

    event Swapped(
        address indexed payer,
        address tokenIn,
        uint256 amountIn,
        uint256 amountOut,
        bytes32 orderId,
        address refundTo,
        uint256 surplus
    );

    constructor(BridgeSource source_, IERC20Metadata usdc_, IPriceOracleRead oracle_, bytes32 nativeSymbol_) {
        if (address(source_) == address(0) || address(usdc_) == address(0) || address(oracle_) == address(0)) revert ZeroAddress();
        (source, usdc, oracle, nativeSymbol) = (source_, usdc_, oracle_, nativeSymbol_);
    }

    /// @notice USD prices (18 decimals) and decimals of `tokenIn` (address(0): the native coin) and of USDC.
    function pricesOf(address tokenIn) public view returns (uint256 priceIn, uint256 priceUsdc, uint8 decimalsIn, uint8 decimalsUsdc) {
        if (tokenIn == address(usdc)) revert UnsupportedToken(tokenIn);
        string memory symbolIn;
        if (tokenIn == address(0)) {
            if (nativeSymbol == bytes32(0)) revert UnsupportedToken(tokenIn);
            symbolIn = _string(nativeSymbol);
            decimalsIn = 18;
        } else {
            symbolIn = _oracleKey(IERC20Metadata(tokenIn).symbol());
            decimalsIn = IERC20Metadata(tokenIn).decimals();
        }
        priceIn = _price(symbolIn);
        priceUsdc = _price(_oracleKey(usdc.symbol()));
        decimalsUsdc = usdc.decimals();
    }

    /// @notice USDC for `amountIn` of `tokenIn`: amountIn * priceIn * 10^decUsdc / (priceUsdc * 10^decIn), rounded down.
    function quoteSwap(address tokenIn, uint256 amountIn) public view returns (uint256 amountOut) {
        (uint256 priceIn, uint256 priceUsdc, uint8 decimalsIn, uint8 decimalsUsdc) = pricesOf(tokenIn);
        return Math.mulDiv(amountIn, priceIn * 10 ** decimalsUsdc, priceUsdc * 10 ** decimalsIn);
    }

    /// @notice Takes `amountIn` of `tokenIn` from the caller (native: msg.value, of which anything above amountIn is
    /// the order's fixed fee; a token: msg.value is the fixed fee), swaps it to USDC, creates `order` (its give token
    /// must be USDC) and pays the surplus to `refundTo`.
    function swapAndCreateOrder(
        address tokenIn,
        uint256 amountIn,
        DlnOrderLib.Order calldata order,
        address refundTo
    ) external payable nonReentrant returns (bytes32 orderId) {
        if (refundTo == address(0)) revert ZeroAddress();
        if (keccak256(order.giveTokenAddress) != keccak256(abi.encodePacked(address(usdc)))) revert WrongGiveToken();
        uint256 fixFee = msg.value;
        if (tokenIn == address(0)) {
            if (msg.value < amountIn) revert WrongValue(amountIn, msg.value);
            fixFee = msg.value - amountIn;
        } else {
            IERC20 t = IERC20(tokenIn);
            uint256 before = t.balanceOf(address(this));
            t.safeTransferFrom(msg.sender, address(this), amountIn);
            uint256 received = t.balanceOf(address(this)) - before;
            if (received != amountIn) revert ReceivedAmountMismatch(amountIn, received);
        }
        uint256 amountOut = quoteSwap(tokenIn, amountIn);
        if (amountOut < order.giveAmount) revert InsufficientOutput(amountOut, order.giveAmount);
        uint256 stock = usdc.balanceOf(address(this));
        if (stock < amountOut) revert InsufficientLiquidity(stock, amountOut);

        IERC20(address(usdc)).forceApprove(address(source), order.giveAmount);
        orderId = source.createOrder{value: fixFee}(order);
        uint256 surplus = amountOut - order.giveAmount;
        if (surplus > 0) IERC20(address(usdc)).safeTransfer(refundTo, surplus);
        emit Swapped(tx.origin, tokenIn, amountIn, amountOut, orderId, refundTo, surplus);
    }

    function _price(string memory symbol) private view returns (uint256 price) {
        (price, ) = oracle.getPrice(symbol);
        if (price == 0) revert NoPrice(symbol);
    }

    /// @dev The PriceOracle key of a token symbol, as the service keys it (modules/pricing normalizeOracleSymbol): USDT0
    /// (Polygon's USDT) is priced as USDT; the oracle itself is case-insensitive.
    function _oracleKey(string memory symbol) private pure returns (string memory) {
        return keccak256(bytes(symbol)) == keccak256("USDT0") ? "USDT" : symbol;
    }

    /// @dev A left-aligned, zero-padded bytes32 as a string.
    function _string(bytes32 b) private pure returns (string memory s) {
        uint256 n = 0;
        while (n < 32 && b[n] != 0) ++n;
        bytes memory out = new bytes(n);
        for (uint256 i = 0; i < n; ++i) out[i] = b[i];
        return string(out);
    }
}
