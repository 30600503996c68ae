import { and, eq, gt, inArray, lte, ne, sql } from "drizzle-orm";
import { getAddress, zeroAddress, type Address } from "viem";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { observePaymentPaid } from "../../core/metrics.js";
import { withTransaction } from "../../db/client.js";
import { payments } from "../../db/schema.js";
import { nativeBalances, walletBalances } from "./balances.js";
import { reopenAfterReorg } from "./reorg.js";
import { transition } from "./state-machine.js";

type Seen = {
  id: string;
  status: string;
  due: bigint;
  previous: bigint;
  received: bigint;
  txHash: string | null;
  /** First and newest block of the counted deposits (native: the block the balance was read at). */
  block: string | null;
  lastBlock: string | null;
  /** Timestamp (s) of the newest counted deposit's block (token payments): detection latency is measured from it. */
  lastAt?: string | null;
  /** Where the payment is paid, and the block its confirmations end at (latest - confirmations + 1). */
  wallet: Address;
  token: Address;
  confirmedAt: bigint;
};

const OPEN = ["pending", "expired"];
/** What detection needs of an open payment. */
const OPEN_COLUMNS = {
  id: payments.id,
  status: payments.status,
  dueUnits: payments.dueUnits,
  receivedUnits: payments.receivedUnits,
  recipientAddress: payments.recipientAddress,
  tokenAddress: payments.tokenAddress,
  blockConfirmations: payments.blockConfirmations,
};
/** validate-create.ts caps `blockConfirmations` at 100. */
export const MAX_CONFIRMATIONS = 100n;
/** Recipients per candidate query (one array parameter each). */
const CHUNK = 5000;

const confirmedAt = (latest: bigint, confirmations: number) => latest - BigInt(confirmations) + 1n;

/** Map.groupBy (Node 21+). */
function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = out.get(k);
    if (group) group.push(item);
    else out.set(k, [item]);
  }
  return out;
}

type TransferView = AppDeps["db"]["views"]["transfer"];

/** A payment's deposits that count at indexed block `latest`: transfers of its token to its address, `blockConfirmations` deep. */
const countedDeposits = (t: TransferView, latest: bigint) =>
  and(
    eq(t.chainId, payments.chainId),
    eq(t.to, sql`lower(${payments.recipientAddress})`),
    eq(t.token, sql`lower(${payments.tokenAddress})`),
    lte(t.blockNumber, sql`${latest.toString()}::numeric - ${payments.blockConfirmations} + 1`),
  );

/** First transaction, first and newest block of the counted deposits. */
const depositSummary = (t: TransferView) => ({
  txHash: sql<string | null>`(array_agg(${t.transactionHash} ORDER BY ${t.blockNumber}, ${t.logIndex}))[1]`,
  block: sql<string | null>`min(${t.blockNumber})`,
  lastBlock: sql<string | null>`max(${t.blockNumber})`,
  lastAt: sql<string | null>`max(${t.timestamp})`,
});

/**
 * Open token payments with their confirmed transfers' sum (at least `block_confirmations` below
 * `latest`); only those paid to `recipients` when given (the candidates of a pass).
 */
async function confirmedTokenDeposits(deps: AppDeps, chain: ActiveChain, latest: bigint, recipients?: string[]): Promise<Seen[]> {
  const t = deps.db.views.transfer;
  const received = sql<string>`sum(${t.amount})`;
  const rows = await deps.db.orm
    .select({ ...OPEN_COLUMNS, received, ...depositSummary(t) })
    .from(payments)
    .innerJoin(t, countedDeposits(t, latest))
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
    lastBlock: r.lastBlock,
    lastAt: r.lastAt,
    wallet: r.recipientAddress as Address,
    token: r.tokenAddress as Address,
    confirmedAt: confirmedAt(latest, r.blockConfirmations),
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
 * Native-coin payments emit no log: their address's balance at the confirmed block. Every open
 * native payment is read each pass, in one Multicall3 batch per confirmation depth (the block they
 * are read at), not one RPC call each.
 */
async function confirmedNativeDeposits(deps: AppDeps, chain: ActiveChain, latest: bigint): Promise<Seen[]> {
  const rows = await deps.db.orm
    .select(OPEN_COLUMNS)
    .from(payments)
    .where(and(eq(payments.chainId, chain.chainId), inArray(payments.status, OPEN), eq(payments.tokenAddress, zeroAddress)));
  const balances = await confirmedNativeBalances(deps, chain, rows, latest);
  return rows.flatMap((r) => {
    const b = balances.get(r.id);
    if (!b) return [];
    return [
      {
        id: r.id,
        status: r.status,
        due: BigInt(r.dueUnits),
        previous: BigInt(r.receivedUnits),
        received: b.balance,
        txHash: null,
        block: b.at.toString(),
        lastBlock: b.at.toString(),
        wallet: r.recipientAddress as Address,
        token: zeroAddress,
        confirmedAt: b.at,
      },
    ];
  });
}

/** Native balances of payments' wallets at their confirmation block: one Multicall3 batch per depth. */
async function confirmedNativeBalances(
  deps: AppDeps,
  chain: ActiveChain,
  rows: { id: string; recipientAddress: string; blockConfirmations: number }[],
  latest: bigint,
): Promise<Map<string, { at: bigint; balance: bigint }>> {
  const out = new Map<string, { at: bigint; balance: bigint }>();
  for (const [at, group] of groupBy(rows, (r) => confirmedAt(latest, r.blockConfirmations))) {
    if (at < 0n) continue;
    const balances = await nativeBalances(
      deps,
      chain,
      group.map((r) => r.recipientAddress as Address),
      at,
    );
    for (const [i, r] of group.entries()) out.set(r.id, { at, balance: balances[i]! });
  }
  return out;
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

  // Lower sums are the re-org check's to judge (detectLostDeposits), with the node's word.
  const up = seen.filter((s) => s.received > s.previous);
  const canonical = await backedOnChain(
    deps,
    chain,
    up.filter((s) => s.received >= s.due),
  );
  let changed = 0;
  for (const s of up) {
    const paid = s.received >= s.due;
    if (paid && !canonical.has(s.id)) continue; // the indexer's view is ahead of (or beside) the chain: next pass
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      const common = {
        received_units: s.received.toString(),
        payment_tx_hash: s.txHash,
        payment_block_number: s.block,
        received_block_number: s.lastBlock,
      };
      if (paid) {
        const done = await transition(client, s.id, {
          from: ["pending", "expired"],
          to: "paid",
          reason: "payment received in full",
          set: { ...common, overpayment_units: (s.received - s.due).toString(), paid_at: new Date(now) },
          now,
        });
        if (done) changed++;
        if (done) observePaymentPaid(chain.chainId, s.lastAt, now);
      } else {
        if (s.status === "expired")
          await transition(client, s.id, { from: ["expired"], to: "pending", reason: "funds received after expiry", set: common, now });
        else
          await client.query(
            `UPDATE payments SET received_units = $2, payment_tx_hash = $3, payment_block_number = $4, received_block_number = $5, updated_at = now()
              WHERE id = $1 AND status = 'pending'`,
            [s.id, common.received_units, s.txHash, s.block, s.lastBlock],
          );
        changed++;
      }
    });
  }
  return { candidates: seen.length, changed };
}

/**
 * Of the payments the indexer shows paid in full, those the node agrees with: the wallet held at least the
 * due amount at the block the confirmations end at, on the canonical chain, and still holds it at the head.
 * A row the indexer has not rolled back yet after a re-org is not taken for a payment, nor are funds that left
 * the wallet without a log (a token's blacklist burn), which would otherwise be paid and re-orged again and again.
 * Native balances at the confirmation block are the node's already; they are checked at the head too.
 */
async function backedOnChain(deps: AppDeps, chain: ActiveChain, seen: Seen[]): Promise<Set<string>> {
  const ok = new Set<string>();
  if (!seen.length) return ok;
  const atHead = await walletBalances(
    deps,
    chain,
    seen.map((s) => ({ address: s.wallet, token: s.token })),
  );
  const held = seen.filter((s, i) => atHead[i]! >= s.due);
  for (const s of held) if (s.token === zeroAddress) ok.add(s.id);
  const byBlock = groupBy(
    held.filter((s) => s.token !== zeroAddress),
    (s) => s.confirmedAt,
  );
  for (const [at, group] of byBlock) {
    const balances = await walletBalances(
      deps,
      chain,
      group.map((s) => ({ address: s.wallet, token: s.token })),
      at,
    );
    for (const [i, s] of group.entries()) if (balances[i]! >= s.due) ok.add(s.id);
  }
  return ok;
}

/**
 * Re-orgs: deposits counted for a payment not swept yet that left the canonical chain. Looked at: every
 * unswept payment whose newest counted deposit is above the indexer's finalized block (below it nothing
 * moves), a few at any time. A lower sum is believed only when the node agrees: the wallet's balance at
 * the head is below what was counted (funds leave an unswept wallet only by a re-org). So an indexer
 * rolling back and re-indexing after a restart, whose rows vanish for a moment, changes nothing.
 * A payment paid in full that is now short goes back to `pending` (reorg.ts); otherwise the lower amount is
 * recorded. Returns the payments changed.
 */
export async function detectLostDeposits(deps: AppDeps, chain: ActiveChain, indexed: IndexedBlocks): Promise<number> {
  const t = deps.db.views.transfer;
  const rows = await deps.db.orm
    .select({ ...OPEN_COLUMNS, counted: sql<string>`coalesce(sum(${t.amount}), 0)`, ...depositSummary(t) })
    .from(payments)
    .leftJoin(t, countedDeposits(t, indexed.latest))
    .where(
      and(
        eq(payments.chainId, chain.chainId),
        // Spelled as payments_reorg_window_idx's predicate, so the planner uses it.
        sql`${payments.receivedUnits} > 0 AND ${payments.status} IN ('pending', 'expired', 'paid', 'awaiting_gas')`,
        gt(payments.receivedBlockNumber, indexed.finalized.toString()),
      ),
    )
    .groupBy(payments.id);
  if (!rows.length) return 0;

  // Native payments: the balance at the confirmation block is what counts, as in the up pass.
  const nativeCounted = await confirmedNativeBalances(
    deps,
    chain,
    rows.filter((r) => r.tokenAddress === zeroAddress),
    indexed.latest,
  );
  const lower = rows
    .map((r) => {
      const native = r.tokenAddress === zeroAddress;
      return {
        ...r,
        now: native ? (nativeCounted.get(r.id)?.balance ?? BigInt(r.receivedUnits)) : BigInt(r.counted),
        block: native ? confirmedAt(indexed.latest, r.blockConfirmations).toString() : r.block,
        lastBlock: native ? confirmedAt(indexed.latest, r.blockConfirmations).toString() : r.lastBlock,
      };
    })
    .filter((r) => r.now < BigInt(r.receivedUnits));
  if (!lower.length) return 0;
  const head = await walletBalances(
    deps,
    chain,
    lower.map((r) => ({ address: r.recipientAddress as Address, token: r.tokenAddress as Address })),
  );

  let changed = 0;
  for (const [i, r] of lower.entries()) {
    const previous = BigInt(r.receivedUnits);
    if (head[i]! >= previous) continue; // the funds are there: the indexer is catching up, not a re-org
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      const due = BigInt(r.dueUnits);
      if ((r.status === "paid" || r.status === "awaiting_gas") && r.now < due) {
        const reason = "a counted deposit left the canonical chain";
        if (
          await reopenAfterReorg(client, r.id, {
            from: ["paid", "awaiting_gas"],
            received: r.now,
            receivedBlock: r.lastBlock,
            txHash: r.txHash,
            reason,
            now,
          })
        )
          changed++;
        return;
      }
      const { rowCount } = await client.query(
        `UPDATE payments SET received_units = $2, overpayment_units = GREATEST($2::numeric - due_units, 0),
                payment_tx_hash = $3, payment_block_number = $4, received_block_number = $5, updated_at = now()
          WHERE id = $1 AND status = $6 AND received_units = $7`,
        [
          r.id,
          r.now.toString(),
          r.now > 0n ? r.txHash : null,
          r.now > 0n ? r.block : null,
          r.now > 0n ? r.lastBlock : null,
          r.status,
          r.receivedUnits,
        ],
      );
      changed += rowCount ?? 0;
    });
  }
  return changed;
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
  // Re-orged deposits first, so a payment they reopen is judged afresh by the pass below.
  const lost = await detectLostDeposits(deps, chain, indexed);
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
  return { ...result, changed: result.changed + lost, after };
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
