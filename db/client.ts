import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import pg from "pg";
import { chainViews, type ChainViews } from "./chain-views.js";
import * as schema from "./schema.js";

// numeric(78,0) and int8 come back as strings: money never passes through a float.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export type Orm = NodePgDatabase<typeof schema>;

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
  const orm = drizzle(pool, { schema });
  return { pool, orm, schema: appSchema, viewsSchema, views: chainViews(viewsSchema), close: () => pool.end() };
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
