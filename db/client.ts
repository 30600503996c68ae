import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import pg from "pg";
import { chainViews, type ChainViews } from "./chain-views.js";

// numeric(78,0) and int8 come back as strings: money never passes through a float.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

// No relational schema: tables are imported where used (each module owns its own, modules/<m>/schema.ts).
export type Orm = NodePgDatabase;

export type Db = {
  pool: pg.Pool;
  orm: Orm;
  /** Postgres schema of the service's tables (search_path). */
  schema: string;
  /** Postgres schema where Ponder publishes its views (chain facts). */
  viewsSchema: string;
  /** Ponder's views in `viewsSchema`, for typed reads with `orm` (db/chain-views.ts). */
  views: ChainViews;
  close(): Promise<void>;
};

export type DbOptions = { url: string; schema?: string; viewsSchema?: string; max?: number };

const ident = (s: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(s)) throw new Error(`invalid schema name: ${s}`);
  return s;
};

export function createDb(opts: DbOptions): Db {
  const appSchema = ident(opts.schema ?? process.env.APP_SCHEMA ?? "app");
  const viewsSchema = ident(opts.viewsSchema ?? process.env.PONDER_VIEWS_SCHEMA ?? "chain");
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    options: `-c search_path=${appSchema}`,
  });
  // An idle client's error (server restart) must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  const orm = drizzle(pool);
  return { pool, orm, schema: appSchema, viewsSchema, views: chainViews(viewsSchema), close: () => pool.end() };
}

// Names of the statements run through prepared(), by text. Bounded: a caller whose text varies with its values
// (which prepared() is not for) would otherwise grow it, and every connection's statements, without end.
const statementNames = new Map<string, string>();
const MAX_PREPARED = 200;

/**
 * `text` as a named prepared statement (`pool.query(prepared(text, values))`): each connection parses, analyses
 * and plans it once, then only binds and runs it. For hot statements whose parsing and planning cost Postgres
 * more than running them (the creation path's CTEs: most of Postgres's time per request when parsed each time).
 * The text must depend only on the statement's shape, never on values; beyond MAX_PREPARED texts a statement
 * runs unnamed as before.
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= MAX_PREPARED) return { text, values };
    statementNames.set(text, (name = `chainpay_${statementNames.size}`));
  }
  return { name, text, values };
}

/** Runs `fn` in one database transaction on a dedicated client (BEGIN/COMMIT, ROLLBACK on throw). */
export async function withTransaction<T>(db: Db, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  try {
    await client.query("BEGIN");
    const out = await fn(client);
    await client.query("COMMIT");
    return out;
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}
