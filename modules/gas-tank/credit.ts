import { and, eq, lte, notExists, or, sql } from "drizzle-orm";
import type { Hex } from "viem";
import { isReceiptNotFound } from "../../chains/tx-sender.js";
import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { gasTankAddresses, ledgerEntries } from "./schema.js";
import { GAS_TANK_DECIMALS, gasTankTokens } from "./usdt.js";

const CREDIT_BATCH = 1000;

/**
 * Credits confirmed USDT deposits to Gas Tank addresses. Idempotent: one ledger row per transfer in its block
 * (`reference` = `deposit:<transfer id>@<block hash>`; entries written before re-orgs were handled have no
 * `@` part and still count). A transfer a re-org moved to another block is credited there once the credit of
 * its old block has been reversed (reverseReorgedDeposits). 18-decimal USDT (chain 56) is truncated to 6 decimals.
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
    const legacy = sql`'deposit:' || ${t.id}`;
    const credit = sql`'deposit:' || ${t.id} || '@' || ${t.blockHash}`;
    const deposits = await orm
      .select({ id: t.id, blockHash: t.blockHash, chainId: t.chainId, amount: t.amount, merchantId: gasTankAddresses.merchantId })
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
              .where(or(eq(ledgerEntries.reference, credit), eq(ledgerEntries.reference, legacy))),
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
          reference: `deposit:${d.id}@${d.blockHash}`,
        })),
      )
      .onConflictDoNothing({ target: ledgerEntries.reference })
      .returning({ id: ledgerEntries.id });
    credited += inserted.length;
  }
  return credited;
}

/** Credits younger than this are checked against the chain for re-orgs (far beyond any chain's finality). */
const REORG_WINDOW = "1 day";

/**
 * Takes back credits whose deposit left the canonical chain: a credit of the last day whose transfer row (id and
 * block hash) the indexer no longer has, and whose transaction the node has in no block or in another one, gets
 * a `gas_tank_reorg` entry of the opposite amount (`reorg:<credit reference>`, once). A row missing only because
 * the indexer is re-indexing (the node still has the transaction in that block) is left alone. The balance may
 * go below zero when the credit was already spent: settlements then wait for a top-up (awaiting_gas).
 */
export async function reverseReorgedDeposits(deps: AppDeps, chain: ActiveChain): Promise<number> {
  const { rows } = await deps.db.pool.query<{ id: string; reference: string; merchant_id: string; amount_micros: string }>(
    `SELECT l.id, l.reference, l.merchant_id, l.amount_micros FROM ledger_entries l
      WHERE l.kind = 'gas_tank_deposit' AND l.chain_id = $1 AND l.created_at > now() - interval '${REORG_WINDOW}'
        AND l.reference LIKE 'deposit:%@%'
        AND NOT EXISTS (SELECT 1 FROM ledger_entries r WHERE r.reference = 'reorg:' || l.reference)`,
    [chain.chainId],
  );
  if (!rows.length) return 0;
  const t = deps.db.views.transfer;
  const parsed = rows.map((r) => {
    const [id, blockHash] = r.reference.slice("deposit:".length).split("@") as [string, string];
    return { ...r, transferId: id, blockHash, txHash: id.split(":")[1] as Hex };
  });
  const present = await deps.db.orm
    .select({ id: t.id, blockHash: t.blockHash })
    .from(t)
    .where(sql`${t.id} = ANY(${sql.param(parsed.map((p) => p.transferId))}::text[])`);
  const still = new Set(present.map((p) => `${p.id}@${p.blockHash}`));
  const client = deps.clients.get(chain.chainId)!;
  let reversed = 0;
  for (const p of parsed) {
    if (still.has(`${p.transferId}@${p.blockHash}`)) continue;
    const receipt = await client.getTransactionReceipt({ hash: p.txHash }).catch((e) => {
      if (isReceiptNotFound(e)) return null;
      throw e; // the node did not answer: decide nothing
    });
    if (receipt && receipt.blockHash.toLowerCase() === p.blockHash.toLowerCase()) continue;
    const { rowCount } = await deps.db.pool.query(
      `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, chain_id, reference) VALUES ($1, 'gas_tank_reorg', $2, $3, $4)
       ON CONFLICT (reference) DO NOTHING`,
      [p.merchant_id, (-BigInt(p.amount_micros)).toString(), chain.chainId, `reorg:${p.reference}`],
    );
    reversed += rowCount ?? 0;
  }
  return reversed;
}

/**
 * One pass over every chain: deposits count once GAS_TANK_CONFIRMATIONS deep at the block the indexer has
 * reached (its rows are what is credited), and credits of deposits re-orged away are reversed.
 */
export async function creditConfirmedDeposits(deps: AppDeps): Promise<number> {
  const progress = await indexerProgress(deps.db);
  let credited = 0;
  for (const chain of deps.chains) {
    const p = progress?.find((x) => x.chainId === chain.chainId);
    if (!p) continue;
    await reverseReorgedDeposits(deps, chain);
    credited += await creditGasTankDeposits(deps, chain, BigInt(p.indexedBlock), deps.config.GAS_TANK_CONFIRMATIONS);
  }
  return credited;
}
