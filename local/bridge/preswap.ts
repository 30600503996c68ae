import { erc20Abi, getAddress, zeroAddress, type Address, type PublicClient } from "viem";
import type { ActiveToken } from "../../chains/runtime.js";
import { mulDivCeil, mulDivFloor, pow10 } from "../../core/money.js";
import { bridgeRouterStandInAbi, DLN_ROUTER } from "./abi.js";
import type { BridgeChain } from "./orders.js";

// The pre-order swap of the local stand-in (contracts/BridgeRouterStandIn.sol at DLN_ROUTER): DLN's API sends an input
// that is not a reserve asset through DeBridgeRouter, which swaps it to a reserve asset before creating the order.
// Locally the reserve asset is always the chain's USDC, and the swap is the router's own USDC stock at the local
// PriceOracle's prices, with no slippage (what create-tx quotes is what the transaction gets while the oracle's prices
// do not move).

/** The error create-tx answers with (create-tx.ts DlnError; passed in to keep this file free of the HTTP side). */
export type PreSwapError = (errorId: string, message: string) => Error;

/**
 * DLN's reserve assets (docs "Reserve assets"): USDC on every chain, and the native coin where it is ETH (wETH on
 * BNB/Polygon/Avalanche is not a local token). Every other input is pre-swapped.
 *
 *   isReserve(chain137, usdc) // true;  isReserve(chain137, matic) // false;  isReserve(chain1, eth) // true
 */
export function isReserve(chain: BridgeChain, token: ActiveToken): boolean {
  if (token.address === zeroAddress) return chain.native?.symbol === "ETH";
  return token.symbol === "USDC";
}

/** What a pre-swap on one chain works with: the router, its USDC, prices and stock, read from the chain. */
export type PreSwap = {
  router: Address;
  usdc: ActiveToken;
  priceIn: bigint;
  priceUsdc: bigint;
  decimalsIn: number;
  decimalsUsdc: number;
  /** The router's USDC balance: the most one swap can give. */
  stock: bigint;
};

/**
 * The chain's pre-swap of `tokenIn` into USDC, or the error DLN's API would answer: no USDC on the chain or no router
 * (IMPOSSIBLE_ROUTE), no price for the token (UNSUPPORTED_TOKEN_IN).
 *
 *   await preSwapOf(client, chain137, matic, err) // { router: DLN_ROUTER, usdc, priceIn: 5n * 10n ** 17n, … }
 */
export async function preSwapOf(client: PublicClient, chain: BridgeChain, tokenIn: ActiveToken, err: PreSwapError): Promise<PreSwap> {
  const usdc = chain.tokens.find((t) => t.symbol === "USDC");
  if (!usdc) throw err("IMPOSSIBLE_ROUTE", `no reserve asset (USDC) on chain ${chain.chainId} to swap ${tokenIn.symbol} into`);
  const code = await client.getCode({ address: DLN_ROUTER });
  if (!code || code === "0x") throw err("IMPOSSIBLE_ROUTE", `no pre-swap router on chain ${chain.chainId}`);
  const routerUsdc = await client.readContract({ address: DLN_ROUTER, abi: bridgeRouterStandInAbi, functionName: "usdc" });
  if (getAddress(routerUsdc) !== getAddress(usdc.address))
    throw err("IMPOSSIBLE_ROUTE", `the pre-swap router on chain ${chain.chainId} swaps into another token than USDC`);
  const [prices, stock] = await Promise.all([
    client
      .readContract({ address: DLN_ROUTER, abi: bridgeRouterStandInAbi, functionName: "pricesOf", args: [tokenIn.address] })
      .catch(() => null),
    client.readContract({ address: usdc.address, abi: erc20Abi, functionName: "balanceOf", args: [DLN_ROUTER] }),
  ]);
  if (!prices) throw err("UNSUPPORTED_TOKEN_IN", `no USD price for ${tokenIn.symbol} on chain ${chain.chainId}`);
  const [priceIn, priceUsdc, decimalsIn, decimalsUsdc] = prices;
  return { router: DLN_ROUTER, usdc, priceIn, priceUsdc, decimalsIn, decimalsUsdc, stock };
}

/**
 * USDC the router gives for `amountIn` (its `quoteSwap`): amountIn · priceIn · 10^decUsdc / (priceUsdc · 10^decIn), rounded down.
 *
 *   swapOut({ priceIn: 5n * 10n ** 17n, priceUsdc: 10n ** 18n, decimalsIn: 18, decimalsUsdc: 6, … }, 10n ** 18n) // 500000n
 */
export function swapOut(p: PreSwap, amountIn: bigint): bigint {
  return mulDivFloor(amountIn, p.priceIn * pow10(p.decimalsUsdc), p.priceUsdc * pow10(p.decimalsIn));
}

/** The least input whose swap gives at least `usdcOut` (rounded up). */
export function swapInFor(p: PreSwap, usdcOut: bigint): bigint {
  return mulDivCeil(usdcOut, p.priceUsdc * pow10(p.decimalsIn), p.priceIn * pow10(p.decimalsUsdc));
}
