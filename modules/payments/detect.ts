import { and, eq, gt, inArray, lte, ne, sql } from "drizzle-orm";
import { getAddress, multicall3Abi, zeroAddress, type Address } from "viem";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { withTransaction } from "../../db/client.js";
import { payments } from "../../db/schema.js";
import { transition } from "./state-machine.js";

type Seen = { id: string; status: string; due: bigint; previous: bigint; received: bigint; txHash: string | null; block: string | null };

const OPEN = ["pending", "expired"];
/** What detection needs of an open payment. */
const OPEN_COLUMNS = { id: payments.id, status: payments.status, dueUnits: payments.dueUnits, receivedUnits: payments.receivedUnits };
/** validate-create.ts caps `blockConfirmations` at 100. */
export const MAX_CONFIRMATIONS = 100n;
/** Recipients per candidate query (one array parameter each). */
const CHUNK = 5000;
/** Addresses per Multicall3 call: ~4k gas each, far below any node's eth_call gas cap. */
const BALANCES_PER_CALL = 1000;

/**
 * Open token payments with their confirmed transfers' sum (at least `block_confirmations` below
 * `latest`); only those paid to `recipients` when given (the candidates of a pass).
 */
async function confirmedTokenDeposits(deps: AppDeps, chain: ActiveChain, latest: bigint, recipients?: string[]): Promise<Seen[]> {
  const t = deps.db.views.transfer;
  const received = sql<string>`sum(${t.amount})`;
  const rows = await deps.db.orm
    .select({
      ...OPEN_COLUMNS,
      received,
      txHash: sql<string>`(array_agg(${t.transactionHash} ORDER BY ${t.blockNumber}, ${t.logIndex}))[1]`,
      block: sql<string>`min(${t.blockNumber})`,
    })
    .from(payments)
    .innerJoin(
      t,
      and(
        eq(t.chainId, payments.chainId),
        eq(t.to, sql`lower(${payments.recipientAddress})`),
        eq(t.token, sql`lower(${payments.tokenAddress})`),
        lte(t.blockNumber, sql`${latest.toString()}::numeric - ${payments.blockConfirmations} + 1`),
      ),
    )
    .where(
      and(
        eq(payments.chainId, chain.chainId),
        inArray(payments.status, OPEN),
        ne(payments.tokenAddress, zeroAddress),
        recipients ? sql`${payments.recipientAddress} = ANY(${sql.param(recipients)}::text[])` : undefined,
      ),
    )
    .groupBy(payments.id);
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    due: BigInt(r.dueUnits),
    previous: BigInt(r.receivedUnits),
    received: BigInt(r.received),
    txHash: r.txHash,
    block: r.block,
  }));
}

/**
 * Addresses that received a transfer indexed in blocks (after, latest], in the forms a payment's
 * `recipient_address` may take (the indexer stores lowercase, payments checksummed): one index
 * range on the transfer table, as long as the window's relevant transfers.
 */
async function recentRecipients(deps: AppDeps, chain: ActiveChain, after: bigint, latest: bigint): Promise<string[]> {
  const t = deps.db.views.transfer;
  const rows = await deps.db.orm
    .selectDistinct({ to: t.to })
    .from(t)
    .where(and(eq(t.chainId, chain.chainId), gt(t.blockNumber, after), lte(t.blockNumber, latest)));
  return rows.flatMap((r) => [r.to, getAddress(r.to)]);
}

/**
 * Native balances of `addresses` at `blockNumber`: one Multicall3 `getEthBalance` call per 1000
 * addresses (all sent at once). An address the batch could not read (no Multicall3 at that block,
 * a node error) is read alone with `eth_getBalance`.
 */
export async function nativeBalances(deps: AppDeps, chain: ActiveChain, addresses: Address[], blockNumber: bigint): Promise<bigint[]> {
  if (!addresses.length) return [];
  const client = deps.clients.get(chain.chainId)!;
  const results = await client.multicall({
    contracts: addresses.map((address) => ({
      address: chain.multicall3,
      abi: multicall3Abi,
      functionName: "getEthBalance" as const,
      args: [address] as const,
    })),
    multicallAddress: chain.multicall3,
    blockNumber,
    allowFailure: true,
    // viem splits by calldata bytes; getEthBalance's calldata is 36 bytes.
    batchSize: 36 * BALANCES_PER_CALL,
  });
  const out: bigint[] = [];
  for (const [i, r] of results.entries())
    out.push(r.status === "success" ? r.result : await client.getBalance({ address: addresses[i]!, blockNumber }));
  return out;
}

/**
 * Native-coin payments emit no log: their address's balance at the confirmed block. Every open
 * native payment is read each pass, in one Multicall3 batch per confirmation depth (the block they
 * are read at), not one RPC call each.
 */
async function confirmedNativeDeposits(deps: AppDeps, chain: ActiveChain, latest: bigint): Promise<Seen[]> {
  const rows = await deps.db.orm
    .select({
      ...OPEN_COLUMNS,
      recipientAddress: payments.recipientAddress,
      blockConfirmations: payments.blockConfirmations,
    })
    .from(payments)
    .where(and(eq(payments.chainId, chain.chainId), inArray(payments.status, OPEN), eq(payments.tokenAddress, zeroAddress)));
  const byBlock = new Map<bigint, typeof rows>();
  for (const r of rows) {
    const at = latest - BigInt(r.blockConfirmations) + 1n;
    if (at < 0n) continue;
    const group = byBlock.get(at);
    if (group) group.push(r);
    else byBlock.set(at, [r]);
  }
  const seen: Seen[] = [];
  for (const [at, group] of byBlock) {
    const balances = await nativeBalances(
      deps,
      chain,
      group.map((r) => r.recipientAddress as Address),
      at,
    );
    for (const [i, r] of group.entries())
      seen.push({
        id: r.id,
        status: r.status,
        due: BigInt(r.dueUnits),
        previous: BigInt(r.receivedUnits),
        received: balances[i]!,
        txHash: null,
        block: at.toString(),
      });
  }
  return seen;
}

/**
 * Sums confirmed transfers to each open payment's address (at least `blockConfirmations` deep)
 * and moves `pending -> paid` once the due amount is reached; partial amounts are recorded and
 * the payment stays pending. Expired payments are scanned too: late funds are never dropped.
 * Native-coin payments emit no log, so they are watched by balance at the confirmed block.
 *
 * `changedAfter`: only token payments whose address received a transfer in a block after it are
 * looked at (see detectIndexedBlock); without it every open payment is (a full scan).
 */
export async function detectPayments(
  deps: AppDeps,
  chain: ActiveChain,
  latest: bigint,
  opts: { changedAfter?: bigint } = {},
): Promise<{ /** Payments looked at (summed or balance read). */ candidates: number; changed: number }> {
  const seen: Seen[] = [];
  if (opts.changedAfter === undefined) seen.push(...(await confirmedTokenDeposits(deps, chain, latest)));
  else {
    const recipients = await recentRecipients(deps, chain, opts.changedAfter, latest);
    for (let i = 0; i < recipients.length; i += CHUNK)
      seen.push(...(await confirmedTokenDeposits(deps, chain, latest, recipients.slice(i, i + CHUNK))));
  }
  if (chain.native) seen.push(...(await confirmedNativeDeposits(deps, chain, latest)));

  let changed = 0;
  for (const s of seen) {
    // Nothing new; or a re-org took a deposit away: keep the higher record until it reappears.
    if (s.received <= s.previous) continue;
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      const common = { received_units: s.received.toString(), payment_tx_hash: s.txHash, payment_block_number: s.block };
      if (s.received >= s.due) {
        const done = await transition(client, s.id, {
          from: ["pending", "expired"],
          to: "paid",
          reason: "payment received in full",
          set: { ...common, overpayment_units: (s.received - s.due).toString(), paid_at: new Date(now) },
          now,
        });
        if (done) changed++;
      } else {
        if (s.status === "expired")
          await transition(client, s.id, { from: ["expired"], to: "pending", reason: "funds received after expiry", set: common, now });
        else
          await client.query(
            `UPDATE payments SET received_units = $2, payment_tx_hash = $3, payment_block_number = $4, updated_at = now() WHERE id = $1 AND status = 'pending'`,
            [s.id, common.received_units, s.txHash, s.block],
          );
        changed++;
      }
    });
  }
  return { candidates: seen.length, changed };
}

/** Ponder's indexed and finalized blocks of a chain. */
export type IndexedBlocks = { latest: bigint; finalized: bigint };
/** What the last complete pass on a chain had seen, and when it last looked at every open payment. */
export type DetectionCursor = IndexedBlocks & { fullScanAt: number };

/**
 * A full scan every so often catches what no transfer window shows: a payment that became open
 * again after its transfers left the window (a withdrawal that failed back to `pending`).
 */
export const FULL_SCAN_EVERY_MS = 10 * 60_000;

const cursorKey = (chainId: number) => `detector:${chainId}`;

export async function readDetectionCursor(deps: AppDeps, chainId: number): Promise<DetectionCursor | null> {
  const { rows } = await deps.db.pool.query<{ value: { latest: string; finalized: string; fullScanAt?: number } }>(
    `SELECT value FROM processor_state WHERE key = $1`,
    [cursorKey(chainId)],
  );
  const v = rows[0]?.value;
  return v ? { latest: BigInt(v.latest), finalized: BigInt(v.finalized), fullScanAt: v.fullScanAt ?? 0 } : null;
}

/**
 * One detection pass for the block Ponder has indexed (`latest`, with its `finalized` block);
 * null when nothing moved since the last pass.
 *
 * A pass looks only at payments whose address received a transfer in a block that can still change
 * what they have received, so its cost follows the transfers of those blocks, not the number of
 * open payments. A transfer in block b counts for a payment from indexed block b + confirmations - 1
 * on; it first counted in this pass if b > cursor - confirmations + 1, so blocks after
 * cursor - MAX_CONFIRMATIONS cover every newly confirmed transfer. Ponder rolls back and re-indexes
 * only rows above its finalized block (a re-org, a restart), so blocks after the last pass's
 * finalized block cover every row that vanished or reappeared. The window starts at the lower of
 * the two; the payments found are recomputed from their whole sum, exactly as a full scan would,
 * so a pass repeated after a crash (the cursor is written last) changes nothing twice.
 */
export async function detectIndexedBlock(
  deps: AppDeps,
  chain: ActiveChain,
  indexed: IndexedBlocks,
): Promise<{ candidates: number; changed: number; after: bigint | null } | null> {
  const cursor = await readDetectionCursor(deps, chain.chainId);
  if (cursor && cursor.latest === indexed.latest) return null;
  const now = deps.now();
  // No cursor yet, a chain that went back below what was final (a local chain restarted), or time for the periodic full scan.
  const full = !cursor || indexed.latest < cursor.finalized || now - cursor.fullScanAt >= FULL_SCAN_EVERY_MS;
  const after = full ? null : min(cursor.latest - MAX_CONFIRMATIONS, cursor.finalized);
  const result = await detectPayments(deps, chain, indexed.latest, after === null ? {} : { changedAfter: after });
  const value = {
    latest: indexed.latest.toString(),
    finalized: indexed.finalized.toString(),
    fullScanAt: full ? now : cursor.fullScanAt,
  };
  await deps.db.pool.query(
    `INSERT INTO processor_state (key, value, updated_at) VALUES ($1, $2, now())
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
    [cursorKey(chain.chainId), JSON.stringify(value)],
  );
  return { ...result, after };
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
