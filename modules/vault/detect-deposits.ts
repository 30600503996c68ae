import { and, asc, eq, gt, inArray, lte, notExists, sql } from "drizzle-orm";
import type { Address, Hex } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { logger } from "../../core/log.js";
import { findToken, type ActiveChain } from "../../chains/runtime.js";
import { withTransaction } from "../../db/client.js";
import { vaultConfigs, vaultDeposits, vaultTokens, vaultUsers } from "./schema.js";
import { watchedAddresses } from "../addresses/index.js";
import { isTransportError, readContractMetadata, storedTokenMetadata, storeTokenMetadata } from "../pricing/index.js";
import type { VaultScreening } from "./screening.js";
import { transitionDeposit } from "./transition.js";
import type { DepositHold } from "./serialize-deposit.js";
import { VAULT_ACTIVE_CHAINS } from "./types.js";
import { readProcessorState, writeProcessorState } from "../../db/processor-state.js";

// Deposit detection: every confirmed transfer to a vault user's address becomes one `vault_deposits` row
// (`detected`), idempotent on the indexer's transfer id. Like payment detection (modules/payments/detect.ts) a
// pass reads only the transfers of blocks that can still change, so its cost follows new transfers, not users.

/** Indexed transfers recorded per query; a larger backlog drains over several queries of one pass. */
const BATCH = 500;

/** Ponder's indexed and finalized blocks of a chain. */
export type IndexedBlocks = { latest: bigint; finalized: bigint };

/** Blocks deep a transfer (a Swept event) must be before it is recorded (completed): VAULT_CONFIRMATIONS, else the chain's finality. */
export function vaultConfirmations(deps: Pick<AppDeps, "config">, chain: Pick<ActiveChain, "finalityBlocks">): number {
  return deps.config.VAULT_CONFIRMATIONS ?? chain.finalityBlocks;
}

/** The deepest block whose events count when Ponder has indexed `latest`: `confirmations` blocks deep (latest counts as 1). */
export const confirmedTip = (latest: bigint, confirmations: number) => latest - BigInt(confirmations) + 1n;

const cursorKey = (chainId: number) => `vault-deposits:${chainId}`;

/** What the last complete pass on a chain had recorded: every transfer indexed up to `latest` is a deposit row. */
export async function readVaultDepositCursor(deps: Pick<AppDeps, "db">, chainId: number): Promise<IndexedBlocks | null> {
  const v = await readProcessorState<{ latest: string; finalized: string }>(deps.db.pool, cursorKey(chainId));
  return v ? { latest: BigInt(v.latest), finalized: BigInt(v.finalized) } : null;
}

/** The 0.001-token minimum: a deposit is processed only when `amount` > 10^(decimals-3) smallest units. */
export function isBelowMinimum(amount: bigint, decimals: number): boolean {
  return amount * 1000n <= 10n ** BigInt(decimals);
}

/** The fee of one deposit: floor(amount * feeBps / 10000), so the business never pays more than its rate. */
export function depositFee(amount: bigint, feeBps: number): bigint {
  return (amount * BigInt(feeBps)) / 10_000n;
}

type Meta = { symbol: string; decimals: number | null };

/** Symbol and decimals of a token the vault does not accept: the registry, the cache table, else the contract (cached). */
async function tokenInfo(deps: Pick<AppDeps, "db" | "clients">, chain: ActiveChain, token: Hex): Promise<Meta> {
  const known = findToken(chain, token);
  if (known) return { symbol: known.symbol, decimals: known.decimals };
  const [cached] = await storedTokenMetadata(deps.db, [{ chainId: chain.chainId, token }]);
  if (cached) return { symbol: cached.symbol ?? "UNKNOWN", decimals: cached.decimals };
  let meta: { symbol: string | null; decimals: number | null } = { symbol: null, decimals: null };
  try {
    meta = await readContractMetadata(deps.clients.get(chain.chainId)!, token as Address);
  } catch (e) {
    // A token whose calls time out must not stop every pass: its deposit is recorded as UNKNOWN (held, never
    // swept on its own) and nothing is cached, so the next deposit of it asks again.
    if (isTransportError(e)) return { symbol: "UNKNOWN", decimals: null };
  }
  // A contract chooses its own symbol: keep it short and printable.
  const symbol = meta.symbol?.replace(/\p{Cc}/gu, "").slice(0, 20) || null;
  await storeTokenMetadata(deps.db, { chainId: chain.chainId, address: token, symbol, decimals: meta.decimals });
  return { symbol: symbol ?? "UNKNOWN", decimals: meta.decimals };
}

/** Transfers to vault addresses indexed in blocks (after, latest] that are not deposits yet, oldest first. */
async function newTransfers(deps: Pick<AppDeps, "db">, chain: ActiveChain, after: bigint | null, latest: bigint) {
  const t = deps.db.views.transfer;
  const w = watchedAddresses;
  const { orm } = deps.db;
  return (
    orm
      .select({
        id: t.id,
        token: t.token,
        amount: t.amount,
        blockNumber: t.blockNumber,
        logIndex: t.logIndex,
        txHash: t.transactionHash,
        userId: vaultUsers.id,
        vaultId: vaultUsers.vaultId,
        merchantId: vaultUsers.merchantId,
        address: vaultUsers.address,
        payout: vaultUsers.businessWallet,
        feeBps: vaultConfigs.feeBps,
        enabledSymbol: vaultTokens.tokenSymbol,
        enabledDecimals: vaultTokens.decimals,
      })
      .from(t)
      // The address's owner on this chain (watched_addresses): the user's row of this chain, or of the chain whose
      // POST /users registered the address here too (modules/vault/users.ts). Same address, salt and payout.
      .innerJoin(w, and(eq(w.chainId, t.chainId), eq(w.address, t.to), eq(w.kind, "vault")))
      .innerJoin(
        vaultUsers,
        and(
          inArray(vaultUsers.chainId, [...VAULT_ACTIVE_CHAINS]),
          eq(vaultUsers.address, t.to),
          eq(sql`${vaultUsers.id}::text`, w.ownerId),
        ),
      )
      .innerJoin(vaultConfigs, eq(vaultConfigs.id, vaultUsers.vaultId))
      .leftJoin(
        vaultTokens,
        and(eq(vaultTokens.vaultId, vaultUsers.vaultId), eq(vaultTokens.chainId, t.chainId), eq(vaultTokens.tokenAddress, t.token)),
      )
      .where(
        and(
          eq(t.chainId, chain.chainId),
          after === null ? undefined : gt(t.blockNumber, after),
          lte(t.blockNumber, latest),
          sql`${t.amount} > 0`,
          notExists(
            orm
              .select({ one: sql`1` })
              .from(vaultDeposits)
              .where(eq(vaultDeposits.transferId, t.id)),
          ),
        ),
      )
      .orderBy(asc(t.blockNumber), asc(t.logIndex))
      .limit(BATCH)
  );
}

/**
 * Records each new transfer as a `detected` deposit with what decides its fate: `hold` null (an enabled token,
 * more than 0.001 tokens: the sweeper will process it, with the fee planned at the vault's current rate),
 * `below_minimum`, or `token_not_enabled` (held: recorded and listed, carried by the next sweep of that token on
 * that address, or recovered (at the vault's fee) on the business's request). Returns how many were recorded.
 */
async function recordTransfers(
  deps: Pick<AppDeps, "db" | "clients" | "now">,
  chain: ActiveChain,
  rows: Awaited<ReturnType<typeof newTransfers>>,
): Promise<number> {
  const metas = new Map<string, Meta>();
  for (const r of rows) if (r.enabledDecimals === null && !metas.has(r.token)) metas.set(r.token, await tokenInfo(deps, chain, r.token));
  const now = new Date(deps.now());
  return withTransaction(deps.db, async (client) => {
    let recorded = 0;
    for (const r of rows) {
      const enabled = r.enabledDecimals !== null;
      const meta: Meta = enabled ? { symbol: r.enabledSymbol!, decimals: r.enabledDecimals } : metas.get(r.token)!;
      let hold: DepositHold | null = enabled ? null : "token_not_enabled";
      if (enabled && isBelowMinimum(r.amount, r.enabledDecimals!)) hold = "below_minimum";
      const fee = hold === null ? depositFee(r.amount, r.feeBps) : 0n;
      const { rows: inserted } = await client.query<{ id: string }>(
        `INSERT INTO vault_deposits (vault_id, merchant_id, vault_user_id, chain_id, address, payout, token_address, token_symbol,
           token_decimals, amount, fee, net_amount, hold, transfer_id, deposit_tx_hash, block_number, log_index, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18)
         ON CONFLICT (transfer_id) DO NOTHING RETURNING id`,
        [
          r.vaultId,
          r.merchantId,
          r.userId,
          chain.chainId,
          r.address,
          r.payout,
          r.token,
          meta.symbol,
          meta.decimals,
          r.amount.toString(),
          fee.toString(),
          (r.amount - fee).toString(),
          hold,
          r.id,
          r.txHash,
          r.blockNumber.toString(),
          r.logIndex,
          now,
        ],
      );
      if (!inserted[0]) continue;
      await client.query(
        `INSERT INTO vault_deposit_events (deposit_id, from_status, to_status, reason, data, created_at) VALUES ($1, NULL, 'detected', $2, $3, $4)`,
        [inserted[0].id, hold ?? "deposit detected", JSON.stringify({ transferId: r.id }), now],
      );
      recorded++;
    }
    return recorded;
  });
}

/**
 * Voids the recorded deposits no sweep has taken yet (`detected`, `failed`, `held`) whose transfer is no longer indexed (a
 * re-org rolled it back; Ponder re-indexes only above its finalized block, so only deposits above the last pass's
 * finalized block are looked at, every one without a cursor). A voided deposit becomes `dropped` (never listed,
 * counted or swept) and frees its transfer id, so the same transfer re-mined is recorded again. A held deposit's open
 * sanctions hold is resolved `dropped` in the same transaction (modules/sanctions/vault.ts).
 */
async function voidVanished(
  deps: Pick<AppDeps, "db" | "now">,
  chain: ActiveChain,
  above: bigint | null,
  screening: Pick<VaultScreening, "closeDropped">,
): Promise<number> {
  const t = `"${deps.db.viewsSchema}".transfer`;
  const { rows } = await deps.db.pool.query<{ id: string; transfer_id: string }>(
    `SELECT d.id, d.transfer_id FROM vault_deposits d
      WHERE d.chain_id = $1 AND d.status IN ('detected', 'failed', 'held') ${above === null ? "" : "AND d.block_number > $2"}
        AND NOT EXISTS (SELECT 1 FROM ${t} t WHERE t.id = d.transfer_id)`,
    above === null ? [chain.chainId] : [chain.chainId, above.toString()],
  );
  if (!rows.length) return 0;
  await withTransaction(deps.db, async (client) => {
    for (const r of rows)
      await transitionDeposit(client, r.id, {
        from: ["detected", "failed", "held"],
        to: "dropped",
        reason: "transfer no longer indexed (re-org)",
        now: deps.now(),
        set: { transfer_id: `${r.transfer_id}#dropped:${r.id}`, next_attempt_at: null },
        data: { transferId: r.transfer_id },
      });
    await screening.closeDropped(
      client,
      rows.map((r) => r.id),
      deps.now(),
    );
  });
  logger("vault-deposits").error({ chainId: chain.chainId, dropped: rows.length }, "deposits dropped: their transfers vanished (re-org)");
  return rows.length;
}

/**
 * One pass for the block Ponder has indexed; null when nothing moved since the last pass. A transfer is recorded
 * once it is `vaultConfirmations` deep (block <= confirmedTip(latest)). Newly confirmed rows are in blocks after the
 * last pass's confirmed tip; rows Ponder rolled back and re-indexed (a restart, a re-org) only above its `finalized`
 * block, so the window starts after the lower of the two (as payment detection does). Deposits whose transfer
 * vanished are voided first. Recording is idempotent on the transfer id, so a pass repeated after a crash (the
 * cursor is written last) records nothing twice. Without a cursor, or after the chain went back below it (a local
 * chain restarted), every indexed transfer is read once.
 */
export async function recordVaultDeposits(
  deps: Pick<AppDeps, "db" | "clients" | "now" | "config">,
  chain: ActiveChain,
  indexed: IndexedBlocks,
  screening: Pick<VaultScreening, "closeDropped">,
): Promise<{ recorded: number; dropped: number } | null> {
  const cursor = await readVaultDepositCursor(deps, chain.chainId);
  if (cursor && cursor.latest === indexed.latest) return null;
  const n = vaultConfirmations(deps, chain);
  const fresh = !cursor || indexed.latest < cursor.finalized;
  const prevTip = cursor ? confirmedTip(cursor.latest, n) : 0n;
  const after = fresh ? null : prevTip < cursor.finalized ? prevTip : cursor.finalized;
  const dropped = await voidVanished(deps, chain, fresh ? null : cursor.finalized, screening);
  const tip = confirmedTip(indexed.latest, n);
  let recorded = 0;
  for (;;) {
    if (tip < 0n) break;
    const rows = await newTransfers(deps, chain, after, tip);
    if (rows.length) recorded += await recordTransfers(deps, chain, rows);
    if (rows.length < BATCH) break;
  }
  await writeProcessorState(deps.db.pool, cursorKey(chain.chainId), {
    latest: indexed.latest.toString(),
    finalized: indexed.finalized.toString(),
  });
  return { recorded, dropped };
}
