import { and, eq, lte, notExists, sql } from "drizzle-orm";
import type { Hex } from "viem";
import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { gasTankAddresses, ledgerEntries } from "../../db/schema.js";
import { GAS_TANK_DECIMALS, gasTankTokens } from "./usdt.js";

const CREDIT_BATCH = 1000;

/**
 * Credits confirmed USDT deposits to Gas Tank addresses. Idempotent: one ledger row per transfer
 * (`reference` = the indexed transfer id). 18-decimal USDT (chain 56) is truncated to 6 decimals.
 */
export async function creditGasTankDeposits(
  deps: AppDeps,
  chain: ActiveChain,
  latestBlock: bigint,
  confirmations: number,
): Promise<number> {
  const t = deps.db.views.transfer;
  const { orm } = deps.db;
  let credited = 0;
  for (const token of gasTankTokens(chain)) {
    const scale = 10n ** BigInt(Math.max(0, token.decimals - GAS_TANK_DECIMALS));
    const credit = sql`'deposit:' || ${t.id}`;
    const deposits = await orm
      .select({ id: t.id, chainId: t.chainId, amount: t.amount, merchantId: gasTankAddresses.merchantId })
      .from(t)
      .innerJoin(gasTankAddresses, and(eq(gasTankAddresses.chainId, t.chainId), eq(gasTankAddresses.address, t.to)))
      .where(
        and(
          eq(t.chainId, chain.chainId),
          eq(t.token, token.address.toLowerCase() as Hex),
          lte(t.blockNumber, latestBlock - BigInt(confirmations) + 1n),
          notExists(
            orm
              .select({ one: sql`1` })
              .from(ledgerEntries)
              .where(eq(ledgerEntries.reference, credit)),
          ),
        ),
      )
      // A bounded batch per pass (a backlog drains over several): one insert stays far below Postgres' bind limit.
      .limit(CREDIT_BATCH);
    if (deposits.length === 0) continue;
    const inserted = await orm
      .insert(ledgerEntries)
      .values(
        deposits.map((d) => ({
          merchantId: d.merchantId,
          kind: "gas_tank_deposit",
          amountMicros: (d.amount / scale).toString(),
          chainId: d.chainId,
          reference: `deposit:${d.id}`,
        })),
      )
      .onConflictDoNothing({ target: ledgerEntries.reference })
      .returning({ id: ledgerEntries.id });
    credited += inserted.length;
  }
  return credited;
}

/** One pass over every chain: deposits count once GAS_TANK_CONFIRMATIONS deep at the node's head. */
export async function creditConfirmedDeposits(deps: AppDeps): Promise<number> {
  let credited = 0;
  for (const chain of deps.chains) {
    const latest = await deps.clients.get(chain.chainId)!.getBlockNumber({ cacheTime: 0 });
    credited += await creditGasTankDeposits(deps, chain, latest, deps.config.GAS_TANK_CONFIRMATIONS);
  }
  return credited;
}
