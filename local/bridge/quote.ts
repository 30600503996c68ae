import { zeroAddress, type Address, type PublicClient } from "viem";
import type { ActiveToken } from "../../chains/runtime.js";
import { mulDivCeil, mulDivFloor, parsePrice18, pow10 } from "../../core/money.js";
import { readOracleAt } from "../../modules/pricing/index.js";
import type { BridgeChain } from "./orders.js";

// Pricing of the local bridge stand-in: the solver's price for moving value between two local chains. Values are
// the on-chain PriceOracle's USD prices (18 decimals; stablecoins count as exactly 1.00), the solver keeps a
// margin of BRIDGE_FEE_BPS on the converted amount, and a fixed operating expense (its gas on the destination) is
// added on top, like DLN's prependOperatingExpenses. Every amount is bigint smallest units; what the payer gives is
// rounded up and what the receiver gets rounded down, so the solver never pays for rounding.

/** The solver's margin in basis points of the converted amount (0.3 %). */
export const BRIDGE_FEE_BPS = 30n;
/** The fixed operating expense in USD, paid in the give token. */
export const OPERATING_EXPENSE_USD = "0.10";

export type QuoteTerms = { feeBps: bigint; operatingExpenseUsd18: bigint };
export const DEFAULT_TERMS: QuoteTerms = { feeBps: BRIDGE_FEE_BPS, operatingExpenseUsd18: parsePrice18(OPERATING_EXPENSE_USD) };

/** One side of a quote: the token's decimals and its USD price with 18 decimals (> 0). */
export type PricedToken = { decimals: number; price18: bigint };

export type Quote = {
  /** What the payer gives on the source (escrowed), operating expense included. */
  amountIn: bigint;
  /** What the receiver gets on the destination, exactly. */
  amountOut: bigint;
  /** Part of amountIn: the operating expense. */
  operatingExpense: bigint;
  /** Part of amountIn: the solver's margin. */
  takerMargin: bigint;
};

const BPS = 10_000n;

/**
 * The give amount for an exact take amount (DLN's srcChainTokenInAmount=auto): the take amount's USD value in the
 * give token plus the margin, rounded up, plus the operating expense in the give token, rounded up.
 *
 *   quoteExactOut(10_000_000n, { decimals: 18, price18: 5n * 10n ** 17n }, { decimals: 6, price18: 10n ** 18n })
 *   // 10 USDC for MATIC at 0.50: amountIn 20.26 MATIC = 20.06 (20 + 0.3 %) + 0.2 (0.10 USD)
 */
export function quoteExactOut(amountOut: bigint, tokenIn: PricedToken, tokenOut: PricedToken, terms = DEFAULT_TERMS): Quote {
  // amountOut * priceOut / 10^decOut is USD; * 10^decIn / priceIn is the give token.
  const num = amountOut * tokenOut.price18 * pow10(tokenIn.decimals);
  const den = tokenIn.price18 * pow10(tokenOut.decimals);
  const base = mulDivCeil(num, 1n, den);
  const withMargin = mulDivCeil(num, BPS + terms.feeBps, den * BPS);
  const operatingExpense = mulDivCeil(terms.operatingExpenseUsd18, pow10(tokenIn.decimals), tokenIn.price18);
  return { amountIn: withMargin + operatingExpense, amountOut, operatingExpense, takerMargin: withMargin - base };
}

/**
 * The take amount for an exact give amount (DLN's dstChainTokenOutAmount=auto): the give amount less the operating
 * expense, less the margin, converted and rounded down. Null when nothing would be left.
 *
 *   quoteExactIn(20_260_000_000_000_000_000n, matic, usdc) // amountOut 10_000_000n (10 USDC)
 */
export function quoteExactIn(amountIn: bigint, tokenIn: PricedToken, tokenOut: PricedToken, terms = DEFAULT_TERMS): Quote | null {
  const operatingExpense = mulDivCeil(terms.operatingExpenseUsd18, pow10(tokenIn.decimals), tokenIn.price18);
  const net = amountIn - operatingExpense;
  if (net <= 0n) return null;
  const amountOut = mulDivFloor(
    net * tokenIn.price18 * pow10(tokenOut.decimals),
    BPS,
    tokenOut.price18 * pow10(tokenIn.decimals) * (BPS + terms.feeBps),
  );
  if (amountOut <= 0n) return null;
  const base = mulDivCeil(amountOut * tokenOut.price18, pow10(tokenIn.decimals), tokenIn.price18 * pow10(tokenOut.decimals));
  return { amountIn, amountOut, operatingExpense, takerMargin: net - base };
}

/** A chain's token by address, the native coin (0x0) included; undefined when the chain does not have it. */
export function bridgeToken(chain: BridgeChain, address: string): ActiveToken | undefined {
  const a = address.toLowerCase();
  if (a === zeroAddress) return chain.native ? { ...chain.native, address: zeroAddress } : undefined;
  return chain.tokens.find((t) => t.address.toLowerCase() === a);
}

/**
 * A token's USD price with 18 decimals: 1.00 for a stablecoin, else the oracle price of its symbol on its own
 * chain's PriceOracle, or the first chain's that has one. Null when no oracle has a price.
 *
 *   await usdPrice18(chains, clients, chain137, matic) // 500000000000000000n (0.50 USD)
 */
export async function usdPrice18(
  chains: BridgeChain[],
  clients: Map<number, PublicClient>,
  chain: BridgeChain,
  token: ActiveToken,
): Promise<bigint | null> {
  if (token.kind === "stablecoin") return 10n ** 18n;
  const oracleChain = chain.oracle ? chain : chains.find((c) => c.oracle);
  const client = oracleChain && clients.get(oracleChain.chainId);
  if (!oracleChain?.oracle || !client) return null;
  const price = await readOracleAt(client, oracleChain.chainId, oracleChain.oracle as Address, token.oracleSymbol);
  return price?.priceRaw ?? null;
}
