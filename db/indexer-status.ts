import type pg from "pg";
import type { Db } from "./client.js";
import { listen, type Listener } from "./listen.js";

export type IndexerProgress = { chainId: number; chainName: string; indexedBlock: number; finalizedBlock: number; indexedAt: number };

// Ponder checkpoints are fixed-width digit strings: timestamp(10) chainId(16) blockNumber(16) ...
const blockOf = (checkpoint: string) => Number(checkpoint.slice(26, 42));
const timeOf = (checkpoint: string) => Number(checkpoint.slice(0, 10)) * 1000;

/** Indexer progress per chain from Ponder's `_ponder_checkpoint` (published in the views schema). Null until Ponder is ready. */
export async function indexerProgress(db: Db): Promise<IndexerProgress[] | null> {
  const c = db.views.checkpoint;
  try {
    const rows = await db.orm.select().from(c).orderBy(c.chainId);
    return rows.map((r) => ({
      chainId: r.chainId,
      chainName: r.chainName,
      indexedBlock: blockOf(r.latestCheckpoint),
      finalizedBlock: blockOf(r.finalizedCheckpoint),
      indexedAt: timeOf(r.latestCheckpoint),
    }));
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "42P01" || code === "3F000") return null; // views not created yet
    throw e;
  }
}

/**
 * The channel on which the indexer's progress is announced: `<views schema>_progress` ("chain_progress"),
 * payload the chain id. Named after the views schema so two indexers in one database do not mix.
 */
export const progressChannel = (viewsSchema: string) => `${viewsSchema}_progress`;

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/**
 * Makes Ponder's checkpoint table announce progress: a trigger on the table behind the
 * `<views>._ponder_checkpoint` view NOTIFYs the chain id when a chain's latest checkpoint moves.
 * Ponder 0.16 updates that row in the same transaction as the block's rows (runtime/multichain.js,
 * "update_checkpoints" after the block's flush), and Postgres delivers a NOTIFY only at commit, so a
 * listener that hears it sees the rows. Ponder moves to a new schema on a new build and may
 * recreate the table, so this is checked against whatever the view points at now and is cheap to
 * repeat. Returns the table it watches, or null while Ponder has not published its views.
 */
export async function ensureProgressTrigger(client: pg.ClientBase, viewsSchema: string): Promise<string | null> {
  const find = () =>
    client.query<{ schema: string; installed: boolean }>(
      `SELECT n.nspname AS schema,
              EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = $2) AS installed
         FROM pg_rewrite r
         JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass
         JOIN pg_class c ON c.oid = d.refobjid AND c.relkind IN ('r', 'p') AND c.relname = '_ponder_checkpoint'
         JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE r.ev_class = to_regclass($1)
        LIMIT 1`,
      [`${ident(viewsSchema)}._ponder_checkpoint`, triggerName(viewsSchema)],
    );
  const found = (await find()).rows[0];
  if (!found) return null;
  const table = `${ident(found.schema)}._ponder_checkpoint`;
  if (found.installed) return table;
  const fn = `${ident(found.schema)}.${ident(triggerName(viewsSchema))}`;
  // One installer at a time (replicas, test files): concurrent CREATE OR REPLACE FUNCTION fails.
  await client.query("BEGIN");
  try {
    await client.query("SET LOCAL lock_timeout = '5s'");
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('progress-trigger:' || $1))`, [viewsSchema]);
    const again = (await find()).rows[0];
    if (again && !again.installed && again.schema === found.schema) {
      // A notification is a hint: whatever goes wrong here is swallowed rather than failing Ponder's block.
      await client.query(`CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM pg_notify('${progressChannel(viewsSchema)}', NEW.chain_id::text);
  ELSIF NEW.latest_checkpoint IS DISTINCT FROM OLD.latest_checkpoint THEN
    PERFORM pg_notify('${progressChannel(viewsSchema)}', NEW.chain_id::text);
  END IF;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RETURN NULL;
END $$`);
      await client.query(
        `CREATE OR REPLACE TRIGGER ${ident(triggerName(viewsSchema))} AFTER INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fn}()`,
      );
    }
    await client.query("COMMIT");
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    throw e;
  }
  return table;
}

const triggerName = (viewsSchema: string) => `${viewsSchema}_progress_notify`;

/**
 * Calls `onProgress` when Ponder commits a block (the chain id, or undefined when unknown).
 * Listens on our trigger's channel and on Ponder's own live-query channel (`<views>_live_query`,
 * sent by Ponder in the same commit), so progress is heard even where this role may not add a
 * trigger to Ponder's table. After a reconnect it calls `onProgress()` once: something may have
 * been missed. Notifications are hints: callers still poll now and then.
 */
export function watchIndexerProgress(opts: {
  url: string;
  viewsSchema: string;
  onProgress(chainId?: number): void;
  log?(msg: string): void;
}): Listener {
  let lastError = "";
  return listen({
    url: opts.url,
    channels: [progressChannel(opts.viewsSchema), `${opts.viewsSchema}_live_query`],
    onNotify: (channel, payload) => opts.onProgress(channel === progressChannel(opts.viewsSchema) ? Number(payload) : undefined),
    onReconnect: () => opts.onProgress(),
    async check(client) {
      try {
        await ensureProgressTrigger(client, opts.viewsSchema);
        lastError = "";
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (!code || code.startsWith("08")) throw e; // the connection: let listen() reconnect
        const msg = (e as Error).message;
        if (msg !== lastError) opts.log?.(`progress trigger not installed (${msg}); woken by Ponder's own notifications and polling`);
        lastError = msg;
      }
    },
    log: opts.log,
  });
}
