import type pg from "pg";
import { toEventSelector } from "viem";
import type { Db } from "../../db/client.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { readProcessorState, writeProcessorState } from "../../db/processor-state.js";

// Bounds Ponder's sync store (`ponder_sync`). The wildcard Transfer filter (ponder.config.ts `Token`) makes Ponder
// store every Transfer log of the chain, and the transaction of each, when it backfills (sync-historical) and when
// a block is final (runtime/realtime.js, unless the chain has `disableCache`). Only our addresses' transfers are
// ever indexed (src/index.ts), so a final Transfer log touching no registered address is dead weight: deleted here.
//
// Checked in Ponder 0.16.10's code:
// - The store is read back only by a historical (re-)index (`getEventData`): logs, blocks and transactions of a
//   block range, joined in memory (`runtime/events.js` buildEvents). A missing log is simply not replayed; a log
//   whose block is missing throws, so blocks (and `intervals`, which say a range was fetched) are left alone.
// - Ponder never deletes from the store and inserts a log together with its block and transaction in one
//   transaction (`ON CONFLICT DO NOTHING`).
// - A transaction with no log left (and no trace) is never read: our config has log filters only, no
//   transaction, transfer, block or trace filters (test/modules/indexing/prune-sync.test.ts checks).
//
// Safety with Ponder running:
// - Only blocks at or below Ponder's finalized checkpoint (`_ponder_checkpoint`) are touched.
// - "Ours" is the union of every `watched_addresses` table of the database, as the indexer's set
//   (src/watched-addresses.ts). An address is registered before anyone can pay it, so a transfer that is foreign
//   once final stays foreign.
// - Each batch is its own short transaction. Deleting a log needs no lock: nothing reads it once gone.
// - An orphaned transaction is deleted under `LOCK ... NOWAIT` on transactions and receipts, which waits for no
//   one: Ponder inserts a log's transaction in the log's own transaction, so a concurrent insert either committed
//   before our snapshot (its log keeps the row) or re-inserts the row after us. And only in a later pass than the
//   logs' deletion: a re-index reads a range's logs and transactions in two queries, a log read by the first
//   keeps its transaction for the second.
// - One pruner at a time per database (advisory lock); cursors in `processor_state` so replicas share them.

/** keccak256("Transfer(address,address,uint256)"): ERC-20 and ERC-721 Transfers share it. */
export const TRANSFER_TOPIC = toEventSelector("Transfer(address,address,uint256)");

export type PruneOptions = {
  /** Rows scanned per statement. */
  batchSize?: number;
  /** Rescan every block, not only those finalized since the last pass (logs inserted below the cursor, e.g. a
   * `disableCache` chain refetching its history on restart). Also done every `fullRescanMs`. */
  full?: boolean;
  fullRescanMs?: number;
  /** Orphaned transactions are deleted only when the logs' deletion is at least this old (ms). */
  txDelayMs?: number;
  /** Wait for another pruner's pass instead of skipping this one. */
  wait?: boolean;
  /** The sync store's schema (Ponder's is fixed). */
  syncSchema?: string;
  now?: () => number;
};

export type ChainPruneResult = {
  chainId: number;
  finalizedBlock: number;
  logsScanned: number;
  logsDeleted: number;
  transactionsDeleted: number;
  receiptsDeleted: number;
  /** The orphaned-transaction step: done, not due yet, or skipped because Ponder was writing transactions. */
  transactions: "done" | "not-due" | "busy";
};

export type PruneResult = { skipped: "no-sync-store" | "no-indexer" | "no-registry" | "busy" } | { chains: ChainPruneResult[] };

/** Per chain, how far each step got (blocks at or below are done). */
type Cursor = { logsThrough: number; txThrough: number; logsAt: number; fullAt: number };
const START: Cursor = { logsThrough: -1, txThrough: -1, logsAt: 0, fullAt: 0 };

const DEFAULTS = { batchSize: 10_000, fullRescanMs: 3_600_000, txDelayMs: 60_000 };
const LOCK_KEY = "ponder_sync prune";
/** Past every log and transaction index of a block: a cursor at (block, INT4_MAX) resumes at the next block. */
const INT4_MAX = 2_147_483_647;
const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
const cursorKey = (chainId: number) => `sync-prune:${chainId}`;
/** A registry table dropped while we read it (test schemas come and go): list them again. */
const isGone = (e: unknown) => ["42P01", "3F000"].includes((e as { code?: string }).code ?? "");
const isLocked = (e: unknown) => (e as { code?: string }).code === "55P03";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One pass over every indexed chain: orphaned transactions of earlier passes, then foreign final Transfer logs. */
export async function pruneSyncStore(db: Db, opts: PruneOptions = {}): Promise<PruneResult> {
  const o = { ...DEFAULTS, now: Date.now, syncSchema: "ponder_sync", ...opts };
  const client = await db.pool.connect();
  let locked = false;
  let broken = false;
  try {
    const { rows } = await client.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AS ok`, [
      `${ident(o.syncSchema)}.logs`,
      `${ident(o.syncSchema)}.transactions`,
    ]);
    if (!rows[0]?.ok) return { skipped: "no-sync-store" };
    if (o.wait) await client.query(`SELECT pg_advisory_lock(hashtext($1))`, [LOCK_KEY]);
    else if (!(await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1)) AS ok`, [LOCK_KEY])).rows[0]!.ok)
      return { skipped: "busy" };
    locked = true;
    const progress = await indexerProgress(db);
    if (!progress) return { skipped: "no-indexer" };
    const store = new SyncStore(client, o.syncSchema);
    if (!(await store.loadRegistries())) return { skipped: "no-registry" };
    const chains: ChainPruneResult[] = [];
    for (const { chainId, finalizedBlock } of progress) {
      const r: ChainPruneResult = {
        chainId,
        finalizedBlock,
        logsScanned: 0,
        logsDeleted: 0,
        transactionsDeleted: 0,
        receiptsDeleted: 0,
        transactions: "not-due",
      };
      chains.push(r);
      const c = { ...(await readCursor(client, chainId)) };
      // Transactions first: only blocks whose logs an earlier pass pruned, long enough ago.
      if (c.txThrough < c.logsThrough && o.now() - c.logsAt >= o.txDelayMs) {
        const t = await store.pruneOrphanTransactions(chainId, c.txThrough, c.logsThrough, o.batchSize);
        r.transactionsDeleted = t.transactions;
        r.receiptsDeleted = t.receipts;
        r.transactions = t.busy ? "busy" : "done";
        if (!t.busy) c.txThrough = c.logsThrough;
        await writeCursor(client, chainId, c);
      }
      const full = o.full || o.now() - c.fullAt >= o.fullRescanMs;
      const from = full ? -1 : c.logsThrough;
      if (finalizedBlock > from) {
        const l = await store.pruneForeignLogs(chainId, from, finalizedBlock, o.batchSize);
        r.logsScanned = l.scanned;
        r.logsDeleted = l.deleted;
        c.logsThrough = finalizedBlock;
        c.logsAt = o.now();
        // Every block's transactions are due again: logs may have been pruned anywhere.
        if (full) Object.assign(c, { fullAt: o.now(), txThrough: -1 });
        await writeCursor(client, chainId, c);
      }
    }
    return { chains };
  } finally {
    // A connection that cannot unlock is dropped: the server releases a session's advisory locks with it.
    if (locked) await client.query(`SELECT pg_advisory_unlock(hashtext($1))`, [LOCK_KEY]).catch(() => (broken = true));
    client.release(broken);
  }
}

async function readCursor(client: pg.ClientBase, chainId: number): Promise<Cursor> {
  return { ...START, ...(await readProcessorState<Cursor>(client, cursorKey(chainId))) };
}

async function writeCursor(client: pg.ClientBase, chainId: number, c: Cursor) {
  await writeProcessorState(client, cursorKey(chainId), c);
}

type TxBatch = { scanned: number; transactions: number; receipts: number; last_block: string | null; last_index: number | null };

/** Statements on the sync store, keyset-paginated on its primary keys (chain_id, block_number, ...). */
class SyncStore {
  private registries: string[] = [];
  constructor(
    private client: pg.ClientBase,
    private schema: string,
  ) {}

  /** Every `watched_addresses (chain_id, address)` of the database; false when there is none. */
  async loadRegistries(): Promise<boolean> {
    const { rows } = await this.client.query<{ schema: string }>(
      `SELECT n.nspname AS schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relname = 'watched_addresses' AND c.relkind IN ('r', 'p')
          AND (SELECT count(*) FROM pg_attribute a
                WHERE a.attrelid = c.oid AND a.attname IN ('chain_id', 'address') AND NOT a.attisdropped) = 2
        ORDER BY 1`,
    );
    this.registries = rows.map((r) => r.schema);
    return this.registries.length > 0;
  }

  private get watched() {
    return this.registries.map((s) => `SELECT chain_id, address FROM ${ident(s)}.watched_addresses`).join(" UNION ALL ");
  }

  /** One statement in its own short transaction; re-run once the registries are listed again if one vanished. */
  private async batch<R extends pg.QueryResultRow>(sql: () => string, params: unknown[], lock?: string): Promise<R> {
    for (let attempt = 0; ; attempt++) {
      await this.client.query("BEGIN");
      try {
        await this.client.query("SET LOCAL statement_timeout = '60s'");
        if (lock) await this.client.query(lock);
        const { rows } = await this.client.query<R>(sql(), params);
        await this.client.query("COMMIT");
        return rows[0]!;
      } catch (e) {
        await this.client.query("ROLLBACK").catch(() => {});
        if (attempt < 3 && isGone(e)) {
          if (!(await this.loadRegistries())) throw e;
          continue;
        }
        throw e;
      }
    }
  }

  /** Deletes Transfer logs in blocks (from, to] whose `from` and `to` (topics 1, 2) are none of ours. */
  async pruneForeignLogs(chainId: number, from: number, to: number, batchSize: number) {
    const s = ident(this.schema);
    let cursor = { block: String(from), index: INT4_MAX };
    let scanned = 0;
    let deleted = 0;
    for (;;) {
      const r = await this.batch<{ scanned: number; deleted: number; last_block: string | null; last_index: number | null }>(
        // A topic is the address left-padded to 32 bytes: its last 20 bytes (characters 27-66).
        () => `WITH batch AS (
            SELECT block_number, log_index, topic0, topic1, topic2 FROM ${s}.logs
             WHERE chain_id = $1 AND (block_number, log_index) > ($2, $3) AND block_number <= $4
             ORDER BY block_number, log_index LIMIT $5
          ), doomed AS (
            SELECT b.block_number, b.log_index FROM batch b
             WHERE b.topic0 = $6
               AND NOT EXISTS (SELECT 1 FROM (${this.watched}) w
                                WHERE w.chain_id = $1
                                  AND w.address IN ('0x' || lower(substr(b.topic1, 27)), '0x' || lower(substr(b.topic2, 27))))
          ), gone AS (
            DELETE FROM ${s}.logs l USING doomed d
             WHERE l.chain_id = $1 AND l.block_number = d.block_number AND l.log_index = d.log_index
            RETURNING 1
          ), last AS (SELECT block_number, log_index FROM batch ORDER BY block_number DESC, log_index DESC LIMIT 1)
          SELECT (SELECT count(*) FROM batch)::int AS scanned, (SELECT count(*) FROM gone)::int AS deleted,
                 (SELECT block_number FROM last) AS last_block, (SELECT log_index FROM last) AS last_index`,
        [chainId, cursor.block, cursor.index, to, batchSize, TRANSFER_TOPIC],
      );
      scanned += r.scanned;
      deleted += r.deleted;
      if (r.scanned < batchSize || r.last_block === null) return { scanned, deleted };
      cursor = { block: r.last_block, index: r.last_index! };
    }
  }

  /**
   * Deletes transactions (and their receipts) in blocks (from, to] that no log or trace refers to any more.
   * `busy` when Ponder was writing transactions every time we asked: left for the next pass.
   */
  async pruneOrphanTransactions(chainId: number, from: number, to: number, batchSize: number) {
    const s = ident(this.schema);
    let cursor = { block: String(from), index: INT4_MAX };
    let transactions = 0;
    let receipts = 0;
    for (;;) {
      let r: TxBatch | undefined;
      for (let attempt = 0; !r; attempt++) {
        try {
          r = await this.batch<TxBatch>(
            () => `WITH batch AS (
                SELECT block_number, transaction_index FROM ${s}.transactions
                 WHERE chain_id = $1 AND (block_number, transaction_index) > ($2, $3) AND block_number <= $4
                 ORDER BY block_number, transaction_index LIMIT $5
              ), doomed AS (
                SELECT b.block_number, b.transaction_index FROM batch b
                 WHERE NOT EXISTS (SELECT 1 FROM ${s}.logs l
                                    WHERE l.chain_id = $1 AND l.block_number = b.block_number AND l.transaction_index = b.transaction_index)
                   AND NOT EXISTS (SELECT 1 FROM ${s}.traces t
                                    WHERE t.chain_id = $1 AND t.block_number = b.block_number AND t.transaction_index = b.transaction_index)
              ), gone AS (
                DELETE FROM ${s}.transactions x USING doomed d
                 WHERE x.chain_id = $1 AND x.block_number = d.block_number AND x.transaction_index = d.transaction_index
                RETURNING 1
              ), gone_receipts AS (
                DELETE FROM ${s}.transaction_receipts x USING doomed d
                 WHERE x.chain_id = $1 AND x.block_number = d.block_number AND x.transaction_index = d.transaction_index
                RETURNING 1
              ), last AS (SELECT block_number, transaction_index FROM batch ORDER BY block_number DESC, transaction_index DESC LIMIT 1)
              SELECT (SELECT count(*) FROM batch)::int AS scanned, (SELECT count(*) FROM gone)::int AS transactions,
                     (SELECT count(*) FROM gone_receipts)::int AS receipts,
                     (SELECT block_number FROM last) AS last_block, (SELECT transaction_index FROM last) AS last_index`,
            [chainId, cursor.block, cursor.index, to, batchSize],
            // Conflicts with Ponder's inserts (ROW EXCLUSIVE), not with its reads; NOWAIT: Ponder never waits behind us.
            `LOCK TABLE ${s}.transactions, ${s}.transaction_receipts IN SHARE ROW EXCLUSIVE MODE NOWAIT`,
          );
        } catch (e) {
          if (!isLocked(e)) throw e;
          if (attempt >= 10) return { transactions, receipts, busy: true };
          await sleep(200);
        }
      }
      transactions += r.transactions;
      receipts += r.receipts;
      if (r.scanned < batchSize || r.last_block === null) return { transactions, receipts, busy: false };
      cursor = { block: r.last_block, index: r.last_index! };
    }
  }
}
