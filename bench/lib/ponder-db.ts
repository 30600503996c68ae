import pg from "pg";

// What the benchmarks read of a Ponder's database: its checkpoint (indexed block) and table sizes.

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** Latest indexed block of a Ponder schema (`_ponder_checkpoint`: timestamp(10) chainId(16) block(16) ...); null before it exists. */
export async function indexedBlock(pool: pg.Pool, schema: string, chainId: number): Promise<number | null> {
  try {
    const { rows } = await pool.query<{ c: string }>(
      `SELECT latest_checkpoint AS c FROM ${ident(schema)}._ponder_checkpoint WHERE chain_id = $1`,
      [chainId],
    );
    return rows[0] ? Number(rows[0].c.slice(26, 42)) : null;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "42P01" || code === "3F000") return null;
    throw e;
  }
}

/** Bytes of every table of each schema (heap, indexes, TOAST: pg_total_relation_size), by schema. */
export async function schemaSizes(pool: pg.Pool, schemas: string[]): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ schema: string; bytes: string }>(
    `SELECT n.nspname AS schema, coalesce(sum(pg_total_relation_size(c.oid)), 0)::text AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'm') AND n.nspname = ANY($1::text[])
      GROUP BY n.nspname`,
    [schemas],
  );
  const out: Record<string, number> = Object.fromEntries(schemas.map((s) => [s, 0]));
  for (const r of rows) out[r.schema] = Number(r.bytes);
  return out;
}

/** Rows of a table (exact count; the benchmarks' tables are small enough). */
export async function countRows(pool: pg.Pool, table: string, where = "TRUE", args: unknown[] = []): Promise<number> {
  try {
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table} WHERE ${where}`, args);
    return Number(rows[0]!.n);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "42P01" || code === "3F000") return 0;
    throw e;
  }
}

/** A database next to `url`'s (same server), created empty; returns its URL. */
export async function createDatabase(url: string, name: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS ${ident(name)}`);
    await c.query(`CREATE DATABASE ${ident(name)}`);
  } finally {
    await c.end();
  }
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Live rows of Ponder's sync store (what a pruner leaves; table sizes shrink only after VACUUM FULL). */
export async function syncStoreRows(pool: pg.Pool): Promise<{ logs: number; blocks: number; transactions: number }> {
  const [logs, blocks, transactions] = await Promise.all(
    ["logs", "blocks", "transactions"].map((t) => countRows(pool, `ponder_sync.${t}`)),
  );
  return { logs: logs!, blocks: blocks!, transactions: transactions! };
}
