import { sweepGasCap } from "../../chains/gas-caps.js";
import { findToken } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { usd18ToMicrosCeil } from "../../core/money.js";
import { agentTermsOf } from "../agents/index.js";
import { cachedGasPrice } from "../pricing/index.js";
import { resolveNativePriceUsd, resolveTokenPriceUsd } from "../pricing/index.js";
import { computeFees, gasFeeUsd18, PROCESSING_FEE_USD18 } from "./fees.js";
import { SWEEP_GAS_UNITS } from "./quote.js";

/**
 * What a recovery of unexpected funds costs the merchant (docs/unexpected-funds.md, "Fees"): what a payment of the
 * same amount would. Otherwise a cancelled payment's address would be a fee-free channel: cancel, let customers pay
 * it, recover.
 * - `inKind`: a registry token (or the chain's native coin) with a price: the platform fee (the merchant's rate, no
 *   promotion), the agent's markup, the 0.10 USD processing fee and the sweep's gas, in token units, as for a
 *   gasless payment (fees.ts); the sweep pays them to the fee recipient out of the funds.
 * - `gasTank`, the same fees at their USD value (as a Gas Tank payment is charged), when they are not less than the
 *   funds: dust (a payment failed because its fees exceeded what it received) stays recoverable, at the tank's cost.
 * - `gasTank`, any other token (no price to convert a fee with): the processing fee and the gas of the sweep's whole
 *   gas cap (chains/gas-caps.ts: the most such a sweep may cost, since the token's own code runs in it), in USDT
 *   micros. The platform fee cannot be charged on a token without a price; the settler never pays for such a sweep.
 * The Gas Tank is debited when the sweep is signed, and not given back once it is mined or reverted (the gas is spent).
 */
export type RecoveryCharge = { kind: "inKind"; feeUnits: bigint } | { kind: "gasTank"; micros: bigint };

type PaymentOfRecovery = { chain_id: number; merchant_id: string };

/**
 * The charge of recovering `units` of `token` from the payment's address.
 *
 * @example
 * const charge = await recoveryCharge(deps, payment, token, units); // { kind: "inKind", feeUnits: 10_100_000n }
 */
export async function recoveryCharge(
  deps: Pick<AppDeps, "db" | "chains" | "clients" | "config">,
  p: PaymentOfRecovery,
  token: string,
  units: bigint,
): Promise<RecoveryCharge> {
  const chain = deps.chains.find((c) => c.chainId === p.chain_id)!;
  const known = findToken(chain, token);
  const nativePrice = await resolveNativePriceUsd(deps, chain.chainId, undefined, { cached: true });
  // An unknown token's transfer is its own code: priced at the cap, what the settler may spend on it.
  const gasUnits = !known
    ? sweepGasCap(1, deps.config.SWEEP_GAS_CAP_PER_WALLET)
    : known.kind === "native"
      ? SWEEP_GAS_UNITS.native
      : SWEEP_GAS_UNITS.token;
  const gasUsd18 = nativePrice
    ? gasFeeUsd18({
        gasUnits,
        gasPriceWei: await cachedGasPrice(deps.clients.get(chain.chainId)!),
        nativePriceUsd18: nativePrice.priceUsd18,
      })
    : 0n;
  const price = known
    ? await resolveTokenPriceUsd({
        deps,
        chainId: chain.chainId,
        token: { address: known.address, symbol: known.symbol, kind: known.kind, oracleSymbol: known.oracleSymbol },
        cached: true,
      })
    : null;
  if (!known || !price) return { kind: "gasTank", micros: usd18ToMicrosCeil(PROCESSING_FEE_USD18 + gasUsd18) };
  const { rows } = await deps.db.pool.query<{ platform_fee_bps: number }>(`SELECT platform_fee_bps FROM merchants WHERE id = $1`, [
    p.merchant_id,
  ]);
  const agent = await agentTermsOf(deps.db.pool, p.merchant_id);
  const fees = (mode: "gasless" | "gasTank") =>
    computeFees({
      amountUnits: units,
      decimals: known.decimals,
      priceUsd18: price.priceUsd18,
      platformFeeBps: rows[0]!.platform_fee_bps,
      agentFeeBps: agent?.markupBps ?? 0,
      promo: false,
      gasFeeUsd18: gasUsd18,
      mode,
    });
  const inKind = fees("gasless");
  if (!inKind.feeExceedsAmount) return { kind: "inKind", feeUnits: inKind.totalFeeUnits };
  return { kind: "gasTank", micros: fees("gasTank").gasTankFeeMicros };
}
