import type { ActiveChain } from "../../chains/runtime.js";
import { formatAmount } from "../../core/money.js";

/** Gas Tank amounts are USDT with 6 decimals ("micros"): balances, fees and ledger entries alike. */
export const GAS_TANK_DECIMALS = 6;

/** Micros as a USDT amount for webhooks and API bodies ("1.5"). */
export const usdt = (micros: bigint) => formatAmount(micros, GAS_TANK_DECIMALS);

/** USDT tokens of a chain (USDT0 included) credit the Gas Tank. */
export function gasTankTokens(chain: ActiveChain) {
  return chain.tokens.filter((t) => t.oracleSymbol === "USDT");
}
