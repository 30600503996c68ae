import { and, eq, gt, inArray, lte, ne, sql } from "drizzle-orm";
import { getAddress, zeroAddress, type Address, type Hex } from "viem";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { observePaymentPaid } from "../../core/metrics.js";
import { withTransaction } from "../../db/client.js";
import { payments } from "./schema.js";
import { nativeBalances, walletBalances } from "./balances.js";
import { confirmationsOf } from "./confirmations.js";
import { reopenAfterReorg, unconfirmAfterReorg } from "./reorg.js";
import { transition } from "./state-machine.js";
import { paidThreshold, shortfallUnits } from "./tolerance.js";
import { readProcessorState, writeProcessorState } from "../../db/processor-state.js";

type Seen = {
  id: string;
  status: string;
  due: bigint;
  /**
   * What counts as the full amount: `due` less the payment's underpayment tolerance (tolerance.ts; `due` without one).
   * Every "received in full" below compares with it; over- and underpayment are measured from `due`.
   */
  full: bigint;
  /** What the row holds (`received_units`): the counted amount. */
  previous: bigint;
  /** Counted: the deposits at least `blockConfirmations` deep (native: the balance at the confirmation block). */
  received: bigint;
  /**
   * Seen: every indexed deposit, however shallow (block <= latest; native: the balance at `latest`). Equal to
   * `received` with 1 confirmation. The full amount seen but not counted is `waiting_for_confirmation`.
   */
  indexed: bigint;
  txHash: string | null;
  /** First and newest block of the counted deposits (native: the block the balance was read at). */
  block: string | null;
  lastBlock: string | null;
  /** Timestamp (s) of the newest counted deposit's block (token payments): detection latency is measured from it. */
  lastAt?: string | null;
  /** First seen deposit (transaction, block): what a waiting payment's `transaction` shows. */
  seenTxHash: string | null;
  seenBlock: string | null;
  /**
   * The block in which the seen deposits first add up to the due amount (its confirmations are the payment's:
   * it is counted exactly when that block is `blockConfirmations` deep). Null until known (fullAmountBlocks).
   */
  fullBlock: string | null;
  /** The row's `received_block_number` and `payment_tx_hash` (a waiting payment's full-amount block and first deposit). */
  storedBlock: string | null;
  storedTxHash: string | null;
  confirmations: number;
  /** Where the payment is paid, and the block its confirmations end at (latest - confirmations + 1). */
  wallet: Address;
  token: Address;
  confirmedAt: bigint;
};

const WAITING = "waiting_for_confirmation";
/** Statuses detection moves: open payments, and those whose full amount waits for its confirmations. */
const OPEN = ["pending", "expired", WAITING];
/** What detection needs of an open payment. */
const OPEN_COLUMNS = {
  id: payments.id,
  status: payments.status,
  dueUnits: payments.dueUnits,
  underpaymentToleranceUnits: payments.underpaymentToleranceUnits,
  receivedUnits: payments.receivedUnits,
  recipientAddress: payments.recipientAddress,
  tokenAddress: payments.tokenAddress,
  blockConfirmations: payments.blockConfirmations,
  receivedBlockNumber: payments.receivedBlockNumber,
  paymentTxHash: payments.paymentTxHash,
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

/** A payment's deposits: transfers of its token to its address. */
const depositsOf = (t: TransferView) =>
  and(
    eq(t.chainId, payments.chainId),
    eq(t.to, sql`lower(${payments.recipientAddress})`),
    eq(t.token, sql`lower(${payments.tokenAddress})`),
  );

/** A payment's deposits that count at indexed block `latest`: `blockConfirmations` deep. */
const countedDeposits = (t: TransferView, latest: bigint) =>
  and(depositsOf(t), lte(t.blockNumber, sql`${latest.toString()}::numeric - ${payments.blockConfirmations} + 1`));

/** A payment's deposits indexed up to block `latest`, however shallow (seen, not necessarily counted). */
const seenDeposits = (t: TransferView, latest: bigint) => and(depositsOf(t), lte(t.blockNumber, latest));

/** First transaction, first and newest block of the counted deposits. */
const depositSummary = (t: TransferView) => ({
  txHash: sql<string | null>`(array_agg(${t.transactionHash} ORDER BY ${t.blockNumber}, ${t.logIndex}))[1]`,
  block: sql<string | null>`min(${t.blockNumber})`,
  lastBlock: sql<string | null>`max(${t.blockNumber})`,
  lastAt: sql<string | null>`max(${t.timestamp})`,
});

/**
 * Over the seen deposits (joined with seenDeposits): the seen sum, and the counted sum with its summary (the
 * deposits at least `blockConfirmations` deep, as countedDeposits and depositSummary), in one aggregate.
 */
function seenAndCounted(t: TransferView, latest: bigint) {
  const counted = sql`${t.blockNumber} <= ${latest.toString()}::numeric - ${payments.blockConfirmations} + 1`;
  return {
    indexed: sql<string>`coalesce(sum(${t.amount}), 0)`,
    received: sql<string>`coalesce(sum(${t.amount}) FILTER (WHERE ${counted}), 0)`,
    txHash: sql<string | null>`(array_agg(${t.transactionHash} ORDER BY ${t.blockNumber}, ${t.logIndex}) FILTER (WHERE ${counted}))[1]`,
    block: sql<string | null>`min(${t.blockNumber}) FILTER (WHERE ${counted})`,
    lastBlock: sql<string | null>`max(${t.blockNumber}) FILTER (WHERE ${counted})`,
    lastAt: sql<string | null>`max(${t.timestamp}) FILTER (WHERE ${counted})`,
    seenTxHash: sql<string | null>`(array_agg(${t.transactionHash} ORDER BY ${t.blockNumber}, ${t.logIndex}))[1]`,
    seenBlock: sql<string | null>`min(${t.blockNumber})`,
  };
}

/**
 * Open token payments with their seen and counted sums at indexed block `latest`; only those paid to
 * `recipients` when given (the candidates of a pass), or, with `waiting`, every payment waiting for its
 * confirmations (left joined: one whose deposits left the index reads 0).
 */
async function tokenDeposits(
  deps: AppDeps,
  chain: ActiveChain,
  latest: bigint,
  scope: { recipients?: string[]; waiting?: boolean } = {},
): Promise<Seen[]> {
  const t = deps.db.views.transfer;
  const query = deps.db.orm
    .select({ ...OPEN_COLUMNS, ...seenAndCounted(t, latest) })
    .from(payments)
    .$dynamic();
  const rows = await (scope.waiting ? query.leftJoin(t, seenDeposits(t, latest)) : query.innerJoin(t, seenDeposits(t, latest)))
    .where(
      and(
        eq(payments.chainId, chain.chainId),
        scope.waiting ? eq(payments.status, WAITING) : inArray(payments.status, OPEN),
        ne(payments.tokenAddress, zeroAddress),
        scope.recipients ? sql`${payments.recipientAddress} = ANY(${sql.param(scope.recipients)}::text[])` : undefined,
      ),
    )
    .groupBy(payments.id);
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    due: BigInt(r.dueUnits),
    full: paidThreshold(BigInt(r.dueUnits), BigInt(r.underpaymentToleranceUnits)),
    previous: BigInt(r.receivedUnits),
    received: BigInt(r.received),
    indexed: BigInt(r.indexed),
    txHash: r.txHash,
    block: r.block,
    lastBlock: r.lastBlock,
    lastAt: r.lastAt,
    seenTxHash: r.seenTxHash,
    seenBlock: r.seenBlock,
    fullBlock: null,
    storedBlock: r.receivedBlockNumber,
    storedTxHash: r.paymentTxHash,
    confirmations: r.blockConfirmations,
    wallet: r.recipientAddress as Address,
    token: r.tokenAddress as Address,
    confirmedAt: confirmedAt(latest, r.blockConfirmations),
  }));
}

/**
 * The block in which each payment's seen deposits first add up to its due amount (token payments whose full
 * amount is seen but not counted: a few at any time). Their indexed transfers, summed in order.
 */
async function fullAmountBlocks(deps: AppDeps, chain: ActiveChain, latest: bigint, seen: Seen[]): Promise<void> {
  if (!seen.length) return;
  const t = deps.db.views.transfer;
  const rows = await deps.db.orm
    .select({ to: t.to, token: t.token, amount: t.amount, block: t.blockNumber })
    .from(t)
    .where(
      and(
        eq(t.chainId, chain.chainId),
        inArray(
          t.to,
          seen.map((s) => s.wallet.toLowerCase() as Hex),
        ),
        lte(t.blockNumber, latest),
      ),
    )
    .orderBy(t.blockNumber, t.logIndex);
  for (const s of seen) {
    let sum = 0n;
    for (const r of rows) {
      if (r.to !== s.wallet.toLowerCase() || r.token !== s.token.toLowerCase()) continue;
      sum += r.amount;
      if (sum >= s.full) {
        s.fullBlock = r.block.toString();
        break;
      }
    }
  }
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
 * Native-coin payments emit no log: their address's balance at the confirmed block (counted) and, with more
 * than 1 confirmation, at `latest` (seen). Every open native payment is read each pass, in one Multicall3
 * batch per block read at (the `latest` batch shared by both), not one RPC call each. No log tells the block
 * the full amount arrived in: it is taken to be the block it was first seen at (`latest` of that pass), so the
 * confirmations shown may lag by the blocks the detector skipped; it is counted at the confirmation block all the same.
 */
async function nativeDeposits(deps: AppDeps, chain: ActiveChain, latest: bigint): Promise<Seen[]> {
  const rows = await deps.db.orm
    .select(OPEN_COLUMNS)
    .from(payments)
    .where(and(eq(payments.chainId, chain.chainId), inArray(payments.status, OPEN), eq(payments.tokenAddress, zeroAddress)));
  const reads = rows.flatMap((r) => [
    { id: r.id, kind: "counted" as const, address: r.recipientAddress as Address, at: confirmedAt(latest, r.blockConfirmations) },
    ...(r.blockConfirmations > 1 ? [{ id: r.id, kind: "indexed" as const, address: r.recipientAddress as Address, at: latest }] : []),
  ]);
  const balances = new Map<string, bigint>();
  for (const [at, group] of groupBy(
    reads.filter((x) => x.at >= 0n),
    (x) => x.at,
  )) {
    const got = await nativeBalances(
      deps,
      chain,
      group.map((x) => x.address),
      at,
    );
    for (const [i, x] of group.entries()) balances.set(`${x.kind}:${x.id}`, got[i]!);
  }
  return rows.flatMap((r) => {
    const at = confirmedAt(latest, r.blockConfirmations);
    const received = balances.get(`counted:${r.id}`) ?? 0n;
    const indexed = r.blockConfirmations > 1 ? balances.get(`indexed:${r.id}`) : received;
    if (indexed === undefined) return [];
    const firstSeen = r.status === WAITING && r.receivedBlockNumber ? r.receivedBlockNumber : latest.toString();
    return [
      {
        id: r.id,
        status: r.status,
        due: BigInt(r.dueUnits),
        full: paidThreshold(BigInt(r.dueUnits), BigInt(r.underpaymentToleranceUnits)),
        previous: BigInt(r.receivedUnits),
        received,
        indexed,
        txHash: null,
        block: at.toString(),
        lastBlock: at.toString(),
        seenTxHash: null,
        seenBlock: firstSeen,
        fullBlock: firstSeen,
        storedBlock: r.receivedBlockNumber,
        storedTxHash: r.paymentTxHash,
        confirmations: r.blockConfirmations,
        wallet: r.recipientAddress as Address,
        token: zeroAddress,
        confirmedAt: at,
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
 * Sums the deposits to each open payment's address and moves it along (every move through `transition()`,
 * so a pass repeated, or run by two replicas at once, changes nothing twice). "The due amount" is the amount due less
 * the payment's underpayment tolerance (`full`, tolerance.ts; the amount due itself without one): a payment paid short
 * within it is paid with its shortfall recorded (`underpayment_units`), and settles what arrived:
 * - counted (at least `blockConfirmations` deep) reaches the due amount, and the node agrees (backedOnChain):
 *   `pending | expired | waiting_for_confirmation -> paid`;
 * - seen (indexed, however shallow) reaches it but counted does not, with more than 1 confirmation required,
 *   and the node's head holds it: `pending | expired -> waiting_for_confirmation`, no event; the row keeps the
 *   counted amount (`receivedAmount` is what counts), the first seen deposit (`transaction`) and the block that
 *   completed the amount (`received_block_number`, whose depth the payer page shows). With 1 confirmation
 *   seen is counted: straight to `paid`, as before;
 * - a waiting payment whose seen sum fell below the due amount, when the node's head agrees (its wallet holds
 *   less than the due amount: funds leave an unswept wallet only by a re-org), goes back to `pending` with what
 *   still counts (reorg.ts unconfirmAfterReorg: no event, it was never reported paid). The indexer rolling back
 *   and re-indexing after a restart, its rows gone for a moment, changes nothing;
 * - otherwise a partial counted amount is recorded and the payment stays pending (an expired one reopens).
 * Expired payments are scanned too: late funds are never dropped. Native-coin payments emit no log, so they are
 * watched by balance (nativeDeposits).
 *
 * `changedAfter`: only token payments whose address received a transfer in a block after it are looked at (see
 * detectIndexedBlock), plus every payment waiting for its confirmations (they deepen, or leave the chain, with no
 * new transfer); without it every open payment is (a full scan).
 */
export async function detectPayments(
  deps: AppDeps,
  chain: ActiveChain,
  latest: bigint,
  opts: { changedAfter?: bigint } = {},
): Promise<{ /** Payments looked at (summed or balance read). */ candidates: number; changed: number }> {
  const found = new Map<string, Seen>();
  const add = (rows: Seen[]) => rows.forEach((s) => found.set(s.id, s));
  if (opts.changedAfter === undefined) add(await tokenDeposits(deps, chain, latest));
  else {
    const recipients = await recentRecipients(deps, chain, opts.changedAfter, latest);
    for (let i = 0; i < recipients.length; i += CHUNK)
      add(await tokenDeposits(deps, chain, latest, { recipients: recipients.slice(i, i + CHUNK) }));
  }
  add(await tokenDeposits(deps, chain, latest, { waiting: true }));
  if (chain.native) add(await nativeDeposits(deps, chain, latest));
  const seen = [...found.values()];

  const paid = (s: Seen) => s.received >= s.full && (s.status === WAITING || s.received > s.previous);
  const confirming = (s: Seen) => s.received < s.full && s.indexed >= s.full && s.confirmations > 1;
  await fullAmountBlocks(
    deps,
    chain,
    latest,
    seen.filter((s) => confirming(s) && s.token !== zeroAddress),
  );
  // Lower counted sums of paid payments are the re-org check's to judge (detectLostDeposits), with the node's word.
  const canonical = await backedOnChain(deps, chain, seen.filter(paid));
  // The node's head, for a payment about to wait for its confirmations (the indexer's rows are on the chain) and
  // for a waiting one whose seen sum fell (a re-org, or only the indexer rolling back for a moment).
  const toCheck = seen.filter((s) => (s.status !== WAITING && confirming(s)) || (s.status === WAITING && s.indexed < s.full));
  const head = await walletBalances(
    deps,
    chain,
    toCheck.map((s) => ({ address: s.wallet, token: s.token })),
  );
  const heldAtHead = new Map(toCheck.map((s, i) => [s.id, head[i]! >= s.full]));

  let changed = 0;
  for (const s of seen) {
    if (s.received >= s.full) {
      if (!paid(s) || !canonical.has(s.id)) continue; // the indexer's view is ahead of (or beside) the chain: next pass
      await withTransaction(deps.db, async (client) => {
        const now = deps.now();
        const done = await transition(client, s.id, {
          from: ["pending", "expired", WAITING],
          to: "paid",
          reason: s.received >= s.due ? "payment received in full" : "payment received within the underpayment tolerance",
          set: {
            received_units: s.received.toString(),
            payment_tx_hash: s.txHash,
            payment_block_number: s.block,
            received_block_number: s.lastBlock,
            overpayment_units: (s.received > s.due ? s.received - s.due : 0n).toString(),
            underpayment_units: shortfallUnits(s.received, s.due).toString(),
            paid_at: new Date(now),
          },
          now,
        });
        if (done) changed++;
        if (done) observePaymentPaid(chain.chainId, s.lastAt, now);
      });
      continue;
    }
    if (confirming(s) && s.fullBlock !== null && (s.status === WAITING || heldAtHead.get(s.id))) {
      changed += await waitForConfirmations(deps, s, latest);
      continue;
    }
    if (s.status === WAITING) {
      // Still seen in full (its block not known yet), or short while the node still holds the funds: the indexer
      // is catching up. Short, and the node agrees: the deposit left the canonical chain.
      if (s.indexed >= s.full || heldAtHead.get(s.id) !== false) continue;
      const reason = `the full amount left the canonical chain before ${s.confirmations} confirmations`;
      await withTransaction(deps.db, async (client) => {
        const moved = await unconfirmAfterReorg(client, s.id, {
          received: s.received,
          txHash: s.txHash,
          block: s.block,
          lastBlock: s.lastBlock,
          reason,
          now: deps.now(),
        });
        if (moved) changed++;
      });
      continue;
    }
    if (s.received <= s.previous) continue;
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      const common = {
        received_units: s.received.toString(),
        payment_tx_hash: s.txHash,
        payment_block_number: s.block,
        received_block_number: s.lastBlock,
      };
      if (s.status === "expired")
        await transition(client, s.id, { from: ["expired"], to: "pending", reason: "funds received after expiry", set: common, now });
      else
        await client.query(
          `UPDATE payments SET received_units = $2, payment_tx_hash = $3, payment_block_number = $4, received_block_number = $5, updated_at = now()
            WHERE id = $1 AND status = 'pending'`,
          [s.id, common.received_units, s.txHash, s.block, s.lastBlock],
        );
      changed++;
    });
  }
  return { candidates: seen.length, changed };
}

/**
 * The full amount is seen, not yet `blockConfirmations` deep: `pending | expired -> waiting_for_confirmation`
 * (the audit row says how deep), or, for a payment already waiting, its row kept in step when the deposits moved
 * (a re-org that took them into another block, a further deposit counted). Returns the payments changed.
 */
async function waitForConfirmations(deps: AppDeps, s: Seen, latest: bigint): Promise<number> {
  // The counted amount; never lowered here (a lower sum is believed only with the node's word, as detectLostDeposits).
  const set = {
    received_units: (s.received > s.previous ? s.received : s.previous).toString(),
    payment_tx_hash: s.seenTxHash,
    payment_block_number: s.seenBlock,
    received_block_number: s.fullBlock,
  };
  return withTransaction(deps.db, async (client) => {
    const now = deps.now();
    if (s.status !== WAITING) {
      const n = confirmationsOf(latest, s.fullBlock!, s.confirmations);
      const done = await transition(client, s.id, {
        from: ["pending", "expired"],
        to: WAITING,
        reason: `full amount seen, ${n} of ${s.confirmations} confirmations`,
        set: { ...set, overpayment_units: "0", underpayment_units: "0" },
        now,
      });
      return done ? 1 : 0;
    }
    if (set.received_units === s.previous.toString() && s.fullBlock === s.storedBlock && s.seenTxHash === s.storedTxHash) return 0;
    const { rowCount } = await client.query(
      `UPDATE payments SET received_units = $2, payment_tx_hash = $3, payment_block_number = $4, received_block_number = $5, updated_at = $6
        WHERE id = $1 AND status = '${WAITING}'`,
      [s.id, set.received_units, set.payment_tx_hash, set.payment_block_number, set.received_block_number, new Date(now)],
    );
    return rowCount ?? 0;
  });
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
  const held = seen.filter((s, i) => atHead[i]! >= s.full);
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
    for (const [i, s] of group.entries()) if (balances[i]! >= s.full) ok.add(s.id);
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
 * recorded. Returns the payments changed. Payments in `waiting_for_confirmation` (their full amount not counted
 * yet) are detectPayments' to judge, on every pass.
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
      const full = paidThreshold(BigInt(r.dueUnits), BigInt(r.underpaymentToleranceUnits));
      if ((r.status === "paid" || r.status === "awaiting_gas") && r.now < full) {
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
                underpayment_units = CASE WHEN status IN ('paid', 'awaiting_gas') THEN GREATEST(due_units - $2::numeric, 0) ELSE 0 END,
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
  const v = await readProcessorState<{ latest: string; finalized: string; fullScanAt?: number }>(deps.db.pool, cursorKey(chainId));
  return v ? { latest: BigInt(v.latest), finalized: BigInt(v.finalized), fullScanAt: v.fullScanAt ?? 0 } : null;
}

/**
 * One detection pass for the block Ponder has indexed (`latest`, with its `finalized` block);
 * null when nothing moved since the last pass.
 *
 * A pass looks only at payments whose address received a transfer in a block that can still change
 * what they have received, so its cost follows the transfers of those blocks, not the number of
 * open payments; and at the payments in `waiting_for_confirmation` (one more query on the status index:
 * a handful at any time), whose deposits deepen, or leave the chain, without a new transfer. A transfer in block b counts for a payment from indexed block b + confirmations - 1
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
  await writeProcessorState(deps.db.pool, cursorKey(chain.chainId), value);
  return { ...result, changed: result.changed + lost, after };
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
