import { getTableColumns, getTableName } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import type pg from "pg";

/** For each status, the statuses it may move to. */
export type Moves<S extends string> = { readonly [K in S]: readonly S[] };

type Client = Pick<pg.PoolClient, "query">;

/**
 * A change of status: only from one of `from` (the caller's view of the row, re-checked under its lock), with the
 * columns of `set` (the table's own fields, typed by its drizzle schema) written in the same UPDATE, and an audit row.
 */
export type Move<F, S extends string> = {
  from: readonly S[];
  to: S;
  reason?: string;
  set?: Partial<Omit<F, "id" | "status">>;
  /** Written to the audit row's `data` (default: `set`). */
  data?: Record<string, unknown>;
  now: number;
};

/**
 * The one `transition()` of a status table: in the caller's transaction, locks the row, checks that it is in one of
 * `from` and that `moves` allows the change, writes it and an audit row (`<audit>`: subject id, from, to, reason,
 * data, time). Returns the updated row (snake_case, as `SELECT *`), or null when the row is not in an expected status
 * (a step repeated after a crash, or done by a replica meanwhile, changes nothing). An illegal move throws: a bug.
 *
 * @example
 * export const transitionWithdrawal = statusMachine<WithdrawalRow, WithdrawalStatus, typeof agentWithdrawals>({
 *   table: agentWithdrawals, audit: "agent_withdrawal_events", subject: "withdrawal_id", moves: WITHDRAWAL_MOVES,
 * });
 * await transitionWithdrawal(client, id, { from: ["requested"], to: "signed", set: { txHash }, now });
 */
export function statusMachine<Row, S extends string, T extends PgTable>(def: {
  table: T;
  audit: string;
  subject: string;
  moves: Moves<S>;
}) {
  const table = getTableName(def.table);
  const columns = getTableColumns(def.table) as Record<string, { name: string }>;
  const hasUpdatedAt = Object.values(columns).some((c) => c.name === "updated_at");
  return async function transition(client: Client, id: string, move: Move<T["$inferInsert"], S>): Promise<Row | null> {
    const { rows } = await client.query<{ status: S }>(`SELECT status FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
    const current = rows[0]?.status;
    if (current === undefined || !move.from.includes(current)) return null;
    if (current !== move.to && !def.moves[current].includes(move.to))
      throw new Error(`illegal ${table} transition ${current} -> ${move.to}`);
    const set: [string, unknown][] = Object.entries(move.set ?? {}).map(([key, value]) => {
      const column = columns[key];
      if (!column) throw new Error(`${table} has no field ${key}`);
      return [column.name, value];
    });
    if (hasUpdatedAt && !set.some(([c]) => c === "updated_at")) set.push(["updated_at", new Date(move.now)]);
    const { rows: updated } = await client.query<Row & Record<string, unknown>>(
      `UPDATE ${table} SET status = $2${set.map(([c], i) => `, "${c}" = $${i + 3}`).join("")} WHERE id = $1 RETURNING *`,
      [id, move.to, ...set.map(([, v]) => v)],
    );
    const data =
      move.data ??
      (move.set ? Object.fromEntries(Object.entries(move.set).map(([k, v]) => [k, typeof v === "bigint" ? v.toString() : v])) : null);
    await client.query(
      `INSERT INTO ${def.audit} (${def.subject}, from_status, to_status, reason, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, current, move.to, move.reason ?? null, data ? JSON.stringify(data) : null, new Date(move.now)],
    );
    return updated[0]!;
  };
}
