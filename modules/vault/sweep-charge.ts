import { sweepGasCap } from "../../chains/gas-caps.js";
import { findToken, type ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { usd18ToMicrosCeil } from "../../core/money.js";
import { gasFeeUsd18, PROCESSING_FEE_USD18 } from "../payments/index.js";
import { cachedGasPrice } from "../pricing/index.js";
import { PriceUnavailableError, resolveNativePriceUsd } from "../pricing/index.js";

/**
 * Who pays the gas of a Vault sweep. A registry token (chains/registry.ts) costs what the operator planned for and is
 * swept at the settler's expense, in batches. Any other token (a business's own token enabled in its Vault, or a
 * held one it asks to recover) runs its own `transfer` code inside the sweep, so its gas is the business's: each
 * such group is swept alone, and the processing fee plus the gas of its whole cap (chains/gas-caps.ts, the most the
 * settler may spend on it) are debited from the merchant's Gas Tank when the sweep is signed. A tank that cannot
 * pay, or a cap the token would exceed, means no sweep (docs/vault.md, "Custom tokens").
 */
export const paysOwnGas = (chain: ActiveChain, token: string): boolean => !findToken(chain, token);

/**
 * The Gas Tank charge of sweeping one custom-token group, USDT micros: what a recovery of such a token costs
 * (modules/payments/recovery-fee.ts): the 0.10 USD processing fee plus the sweep's whole gas cap at the current gas
 * price and native price (no gas part on a chain whose native coin has no price, as for payments).
 *
 * @example
 * const micros = await customSweepCharge(deps, chain); // 1_180_000n: 0.10 + 360,000 gas at 1 gwei, ETH at 3,000 USD
 */
export async function customSweepCharge(deps: Pick<AppDeps, "chains" | "clients" | "config">, chain: ActiveChain): Promise<bigint> {
  const native = await resolveNativePriceUsd(deps, chain.chainId, undefined, { cached: true }).catch((e: unknown) => {
    if (e instanceof PriceUnavailableError) return null;
    throw e;
  });
  const gasUsd18 = native
    ? gasFeeUsd18({
        gasUnits: sweepGasCap(1, deps.config.SWEEP_GAS_CAP_PER_WALLET),
        gasPriceWei: await cachedGasPrice(deps.clients.get(chain.chainId)!),
        nativePriceUsd18: native.priceUsd18,
      })
    : 0n;
  return usd18ToMicrosCeil(PROCESSING_FEE_USD18 + gasUsd18);
}
