import type pg from "pg";

// processor_state (db/schema.ts): small JSON values processors keep between passes and share across replicas
// (scan cursors per chain, heartbeats). These two functions are its only readers and writers by key.

type Queryable = pg.Pool | pg.ClientBase;

/**
 * The value stored under `key`, or undefined.
 *
 * @example
 * const cursor = await readProcessorState<{ latest: string }>(deps.db.pool, "detect:137");
 */
export async function readProcessorState<T>(q: Queryable, key: string): Promise<T | undefined> {
  const { rows } = await q.query<{ value: T }>(`SELECT value FROM processor_state WHERE key = $1`, [key]);
  return rows[0]?.value;
}

/** Stores `value` (JSON) under `key`, replacing what was there. */
export async function writeProcessorState(q: Queryable, key: string, value: unknown): Promise<void> {
  await q.query(
    `INSERT INTO processor_state (key, value, updated_at) VALUES ($1, $2, now())
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
    [key, JSON.stringify(value)],
  );
}
