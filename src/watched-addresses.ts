import pg from "pg";
import { pino } from "pino";

// The addresses the indexer keeps Transfers for: the app's `watched_addresses` registry, held in memory.
// Loaded at start, kept current by LISTEN (a trigger NOTIFYs `chainId:address` when a registration commits).
//
// An address is registered (and committed) before it is shown to anyone, so a transfer to it is mined, and
// fetched by Ponder, after the NOTIFY was sent. Before calling an address foreign we make one round trip on the
// listening connection, started after the transfer's block was fetched: Postgres delivers pending
// notifications before the answer, so any registration committed before that block is in the set by then.
// One round trip per block per chain (blocks are fetched whole before their events run), only when a block has
// a Transfer not already known to be ours. While the connection is down, that check waits for the reconnect and
// the full reload after it: a transfer to a registered address is never dropped.

const CHANNEL = "watched_addresses";
const TABLE = "watched_addresses";

export type WatchedAddresses = {
  /** Whether the indexer keeps this transfer: `from` or `to` (lowercase) is registered on `chainId`. */
  concerns(chainId: number, blockHash: string, from: string, to: string): Promise<boolean>;
  /** Registered addresses known so far (for logs and tests). */
  size(): number;
  close(): Promise<void>;
};

type Log = (msg: string, error?: unknown) => void;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * JSON lines like the service's (core/log.ts, which the indexer may not import: it sees chains/ and abis/ only),
 * at LOG_LEVEL.
 */
function defaultLog(): Log {
  const log = pino({
    level: process.env.LOG_LEVEL || "info",
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  }).child({ component: "watched-addresses" });
  return (msg, e) => log.warn(e === undefined ? {} : { err: e }, msg);
}

export function watchAddresses(opts: { databaseUrl: string; applicationName?: string; log?: Log }): WatchedAddresses {
  const log: Log = opts.log ?? defaultLog();
  const keys = new Set<string>();
  let closed = false;
  let current: pg.Client | null = null;
  // The listening connection, once LISTEN runs and the full set is loaded after it.
  let ready: Promise<pg.Client> = connect();
  // Per chain, the round trip covering the block being indexed.
  const barriers = new Map<number, { blockHash: string; done: Promise<void> }>();

  /**
   * Every schema of the database holding a registry: the notification channel is database-wide, so the set is
   * too (one app schema in production; the test run has one per test file).
   */
  async function loadAll(c: pg.Client) {
    const { rows } = await c.query<{ schema: string }>(
      `SELECT n.nspname AS schema FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace WHERE t.relname = $1 AND t.relkind IN ('r', 'p')`,
      [TABLE],
    );
    for (const { schema } of rows) {
      try {
        const res = await c.query<{ key: string }>(`SELECT chain_id || ':' || address AS key FROM ${c.escapeIdentifier(schema)}.${TABLE}`);
        for (const r of res.rows) keys.add(r.key);
      } catch (e) {
        // Dropped since it was listed (a test schema): nothing of it to watch.
        const code = (e as { code?: string }).code;
        if (code !== "42P01" && code !== "3F000") throw e;
      }
    }
  }

  async function connect(): Promise<pg.Client> {
    for (let attempt = 0; ; attempt++) {
      if (closed) throw new Error("watched addresses closed");
      const c = new pg.Client({
        connectionString: opts.databaseUrl,
        application_name: opts.applicationName ?? "watched-addresses",
        keepAlive: true,
        query_timeout: 15_000,
      });
      c.on("notification", (n) => {
        if (n.channel === CHANNEL && n.payload) keys.add(n.payload);
      });
      c.on("error", (e) => lost(c, e));
      c.on("end", () => lost(c));
      try {
        await c.connect();
        // LISTEN before loading: a registration committed in between is in one or the other (or both).
        await c.query(`LISTEN ${CHANNEL}`);
        await loadAll(c);
        current = c;
        if (attempt > 0) log(`reconnected, ${keys.size} addresses`);
        return c;
      } catch (e) {
        log("connection failed, retrying", e);
        c.removeAllListeners("end");
        await c.end().catch(() => {});
        await sleep(Math.min(10_000, 250 * 2 ** attempt));
      }
    }
  }

  /** The listening connection broke: notifications may be lost, so reconnect and reload everything. */
  function lost(c: pg.Client, e?: unknown) {
    if (current !== c || closed) return;
    log("listening connection lost, reloading", e);
    current = null;
    c.removeAllListeners("end");
    c.end().catch(() => {});
    ready = connect();
    ready.catch(() => {});
  }

  /** A round trip on the listening connection, sent now: every NOTIFY committed before it has been received. */
  async function roundTrip(): Promise<void> {
    for (;;) {
      const c = await ready;
      try {
        await c.query("SELECT 1");
        return;
      } catch (e) {
        lost(c, e);
      }
    }
  }

  function barrier(chainId: number, blockHash: string): Promise<void> {
    const b = barriers.get(chainId);
    if (b?.blockHash === blockHash) return b.done;
    const done = roundTrip();
    barriers.set(chainId, { blockHash, done });
    return done;
  }

  const known = (chainId: number, from: string, to: string) => keys.has(`${chainId}:${to}`) || keys.has(`${chainId}:${from}`);

  // Never an unhandled rejection (only `close()` ends the loop with an error).
  ready.catch(() => {});

  return {
    async concerns(chainId, blockHash, from, to) {
      if (known(chainId, from, to)) return true;
      await barrier(chainId, blockHash);
      return known(chainId, from, to);
    },
    size: () => keys.size,
    async close() {
      closed = true;
      const c = current;
      current = null;
      await c?.end().catch(() => {});
    },
  };
}
