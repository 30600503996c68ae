import type pg from "pg";
import type { Moves } from "../../db/status-machine.js";

// The transition of `webhook_deliveries`. Deliveries change status in batches (the dispatcher's group commit writes
// a whole batch of results in one statement, record.ts), so this is the set-based form of db/status-machine.ts: one
// statement moves every row it picks and writes their audit rows (`webhook_delivery_events`), so a batch still costs
// one round trip. (`webhook_configs` and `vault_webhook_configs` have no status, only `is_active`; `webhook_attempts`
// rows are written once, never updated.)

export type DeliveryStatus =
  /** Waiting for its next attempt at `next_attempt_at`, or claimed by a dispatcher (an attempt in flight). */
  | "pending"
  /** The receiver answered 2xx. */
  | "success"
  /** No attempt left, or its webhook is deleted, inactive or cannot sign (a manual resend makes it pending again). */
  | "failed";

/**
 * An attempt moves a pending delivery on (a failed attempt with attempts left keeps it `pending`: not a move); a
 * manual resend makes any delivery `pending` again. `failed -> success | pending`: an attempt that was in flight when
 * its webhook was deleted (which fails the pending deliveries) is still recorded.
 */
export const DELIVERY_MOVES: Moves<DeliveryStatus> = {
  pending: ["success", "failed"],
  success: ["pending"],
  failed: ["pending", "success"],
};

/** An SQL expression, written into the statement as is (values go in `params`). */
export type SqlExpr = { sql: string };

/** A set-based move of deliveries: which rows, from which statuses, to what, and what else is written. */
export type DeliveriesMove = {
  /** The statuses a row may move from. Part of the WHERE (re-checked under the row lock): other rows are not touched. */
  from: readonly DeliveryStatus[];
  /** The new status: one for every row, or an expression per row (on `d`, `using`) whose value is one of `among`. */
  to: DeliveryStatus | (SqlExpr & { among: readonly DeliveryStatus[] });
  /** CTEs the statement starts with (`name AS (…), …`): a batch's rows, and other writes of the same statement. */
  with?: string;
  /** FROM items beside `d` (webhook_deliveries): what picks the rows and gives the values written. */
  using?: string;
  /** Which rows: a condition on `d` (and `using`). */
  where: string;
  /** The other columns written (`col = expr, …`), on `d` as it was before the move (and `using`). */
  set?: string;
  /** The audit row's reason: a text, or an expression on `d` after the move (and `using`). */
  reason: string | SqlExpr;
  /** The audit row's data: a jsonb expression on `d` after the move (and `using`); default null. */
  data?: SqlExpr;
  /** The audit row's time: epoch ms, or a timestamptz expression (on `using`). */
  at: number | SqlExpr;
  /** More columns of `moved` (RETURNING, on `d` after the move, and `using`), beside moved_id, moved_from, moved_to. */
  returning?: string;
  /** The statement's query on `moved` (and the `with` CTEs); default `SELECT * FROM moved`. */
  select?: string;
  /** The values of $1… in the fragments above; the move's own parameters follow them. */
  params: readonly unknown[];
};

/** A row of `moved`: the delivery, the status it was in and the one it is in now. */
export type MovedDelivery = { moved_id: string; moved_from: DeliveryStatus; moved_to: DeliveryStatus };

const statusesOf = (to: DeliveriesMove["to"]): readonly DeliveryStatus[] => (typeof to === "string" ? [to] : to.among);

/** Throws unless DELIVERY_MOVES allows every change from one of `from` to one of `to`'s statuses (a bug). */
export function checkDeliveryMove(from: readonly DeliveryStatus[], to: DeliveriesMove["to"]): void {
  for (const f of from)
    for (const t of statusesOf(to))
      if (f !== t && !DELIVERY_MOVES[f].includes(t)) throw new Error(`illegal webhook_deliveries transition ${f} -> ${t}`);
}

/**
 * The statement of a set-based move (see transitionDeliveries): `text` and `values` for `query`.
 *
 * WITH <with>,
 *   locked AS (SELECT id, status of the rows of `where` whose status is one of `from`, FOR UPDATE OF d),
 *   moved AS (UPDATE webhook_deliveries d SET status = <to>, <set> FROM locked, <using> WHERE … RETURNING
 *             the id, the status before (locked, read under the lock) and after, the audit reason, data and time),
 *   audit AS (INSERT INTO webhook_delivery_events … SELECT … FROM moved WHERE moved_from <> moved_to)
 * <select>
 */
export function deliveriesMoveQuery(m: DeliveriesMove): { text: string; values: unknown[] } {
  checkDeliveryMove(m.from, m.to);
  const values = [...m.params];
  const param = (v: unknown) => `$${values.push(v)}`;
  const tos = statusesOf(m.to);
  const to = typeof m.to === "string" ? `${param(m.to)}::text` : `(${m.to.sql})`;
  const reason = typeof m.reason === "string" ? `${param(m.reason)}::text` : `(${m.reason.sql})`;
  const at = typeof m.at === "number" ? `${param(new Date(m.at))}::timestamptz` : `(${m.at.sql})`;
  const from = `${param(m.from)}::text[]`;
  const among = `${param(tos)}::text[]`;
  const using = m.using ? `, ${m.using}` : "";
  const text = `WITH ${m.with ? `${m.with},` : ""}
     locked AS (
       SELECT d.id AS locked_id, d.status AS locked_status FROM webhook_deliveries d${using}
        WHERE (${m.where}) AND d.status = ANY(${from})
        FOR UPDATE OF d),
     moved AS (
       UPDATE webhook_deliveries d SET status = ${to}${m.set ? `, ${m.set}` : ""}
         FROM locked${using}
        WHERE d.id = locked.locked_id AND (${m.where}) AND ${to} = ANY(${among})
       RETURNING d.id AS moved_id, locked.locked_status AS moved_from, d.status AS moved_to, ${reason} AS moved_reason,
                 ${m.data ? `(${m.data.sql})` : "NULL::jsonb"} AS moved_data, ${at} AS moved_at${m.returning ? `, ${m.returning}` : ""}),
     audit AS (
       INSERT INTO webhook_delivery_events (delivery_id, from_status, to_status, reason, data, created_at)
       SELECT moved_id, moved_from, moved_to, moved_reason, moved_data, moved_at FROM moved WHERE moved_from <> moved_to)
     ${m.select ?? "SELECT * FROM moved"}`;
  return { text, values };
}

/**
 * The one way deliveries change status: one statement (one round trip, however many rows) that moves the rows of
 * `where` whose status is one of `from` to `to`, writes `set` with it, and an audit row per delivery whose status
 * changed (`webhook_delivery_events`: from, to, reason, data, time; a row that stays in its status, e.g. a retry that
 * stays `pending`, gets none: its attempt is in `webhook_attempts`).
 *
 * The moves are checked as db/status-machine.ts checks them, once per statement instead of per row: every change
 * from one of `from` to one of `to`'s statuses must be in DELIVERY_MOVES, else it throws (a bug) before anything is
 * written. `from` is in the WHERE, so a row found in another status (moved by someone else meanwhile) is simply not
 * moved: no illegal move can happen. The rows are locked (FOR UPDATE) before they are moved, so the status written in
 * the audit row as `from` is the one the row was in, even when a concurrent writer changed it in between.
 *
 * @example
 * await transitionDeliveries(client, {
 *   from: ["pending"], to: "failed", reason: "webhook configuration deleted", at: now,
 *   where: "d.merchant_id = $1 AND d.kind = 'payment'", set: "last_error = 'webhook configuration deleted'", params: [merchantId],
 * });
 */
export async function transitionDeliveries<R extends pg.QueryResultRow = MovedDelivery>(
  client: Pick<pg.PoolClient, "query">,
  m: DeliveriesMove,
): Promise<pg.QueryResult<R>> {
  const { text, values } = deliveriesMoveQuery(m);
  return client.query<R>(text, values);
}
