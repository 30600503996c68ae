import type pg from "pg";
import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { GAS_TANK_DECIMALS } from "../payments/fees.js";
import { formatAmount } from "../../core/money.js";
import { computeWalletAddress, gasTankSalt } from "../../chains/deposit-address.js";

/** Gas Tank amounts are USDT with 6 decimals ("micros"). */
export { GAS_TANK_DECIMALS };

type Q = Pick<pg.Pool, "query">;

export function treasuryAddress(deps: AppDeps): `0x${string}` {
  const t = deps.config.TREASURY_ADDRESS ?? deps.config.FEE_RECIPIENT;
  if (!t) throw new Error("TREASURY_ADDRESS is not set");
  return t as `0x${string}`;
}

/** The merchant's Gas Tank deposit address on a chain (recorded so deposits can be matched in SQL). */
export async function ensureGasTankAddress(deps: AppDeps, chain: ActiveChain, merchantId: string): Promise<string> {
  const salt = gasTankSalt(merchantId);
  const address = computeWalletAddress({ factory: chain.factory!, implementation: chain.implementation, salt, payout: treasuryAddress(deps) });
  await deps.db.pool.query(
    `INSERT INTO gas_tank_addresses (chain_id, address, merchant_id, salt) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
    [chain.chainId, address.toLowerCase(), merchantId, salt],
  );
  return address;
}

export async function gasTankBalance(db: Q, merchantId: string): Promise<bigint> {
  const { rows } = await db.query(`SELECT COALESCE(sum(amount_micros), 0)::text AS b FROM ledger_entries WHERE merchant_id = $1`, [merchantId]);
  return BigInt(rows[0].b);
}

/** USDT tokens of a chain (USDT0 included) credit the Gas Tank. */
export function gasTankTokens(chain: ActiveChain) {
  return chain.tokens.filter((t) => t.oracleSymbol === "USDT");
}

/**
 * Credits confirmed USDT deposits to Gas Tank addresses. Idempotent: one ledger row per transfer
 * (`reference` = the indexed transfer id). 18-decimal USDT (chain 56) is truncated to 6 decimals.
 */
export async function creditGasTankDeposits(deps: AppDeps, chain: ActiveChain, latestBlock: bigint, confirmations: number): Promise<number> {
  const tokens = gasTankTokens(chain);
  if (tokens.length === 0) return 0;
  let credited = 0;
  for (const token of tokens) {
    const scale = 10n ** BigInt(Math.max(0, token.decimals - GAS_TANK_DECIMALS));
    const { rowCount } = await deps.db.pool.query(
      `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, chain_id, reference)
       SELECT g.merchant_id, 'gas_tank_deposit', div(t.amount, $4::numeric), t.chain_id, 'deposit:' || t.id
         FROM "${deps.db.viewsSchema}".transfer t
         JOIN gas_tank_addresses g ON g.chain_id = t.chain_id AND g.address = t."to"
        WHERE t.chain_id = $1 AND t.token = $2 AND t.block_number <= $3
       ON CONFLICT (reference) DO NOTHING`,
      [chain.chainId, token.address.toLowerCase(), (latestBlock - BigInt(confirmations) + 1n).toString(), scale.toString()],
    );
    credited += rowCount ?? 0;
  }
  return credited;
}

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
