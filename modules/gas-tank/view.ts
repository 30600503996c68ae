import type { AppDeps } from "../../core/deps.js";
import { formatAmount } from "../../core/money.js";
import { ensureGasTankAddress } from "./addresses.js";
import { gasTankBalance } from "./ledger.js";
import { GAS_TANK_DECIMALS, gasTankTokens } from "./usdt.js";

/** The merchant's Gas Tank as GET /balance shows it: balance with all 6 decimal places, and where to fund it. */
export async function gasTankView(deps: AppDeps, merchantId: string) {
  const balance = await gasTankBalance(deps.db.pool, merchantId);
  const depositAddresses = [];
  for (const chain of deps.chains) {
    const tokens = gasTankTokens(chain);
    if (!chain.factory || tokens.length === 0) continue;
    const address = await ensureGasTankAddress(deps, chain, merchantId);
    depositAddresses.push({ chainId: chain.chainId, address, tokens: tokens.map((t) => ({ symbol: t.symbol, address: t.address })) });
  }
  return { balance: formatAmount(balance, GAS_TANK_DECIMALS, { fixed: true }), depositAddresses };
}
