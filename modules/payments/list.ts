import { z } from "zod";
import { cursorAtSql, decodeCursor, encodeCursor } from "../../core/cursor.js";
import type { AppDeps } from "../../core/deps.js";
import { Invalid, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { authenticate, type Caller } from "../merchants/index.js";
import { PAYMENT_STATUSES } from "./status.js";
import { bridgeRefsOf } from "../bridge/index.js";
import { indexedBlocks } from "./confirmations.js";
import { paymentListItem } from "./serialize.js";
import type { PaymentRow } from "./types.js";
import { unexpectedFundsOf } from "./unexpected-funds.js";
import type { FundsScreening } from "./funds-screening.js";

/** Largest instant a JS Date holds (and so the largest bound we accept), in Unix ms. */
const MAX_MS = 8.64e15;

const ISO_EXTENDED = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+\- ]\d{2}(?::?\d{2})?)?)?$/i;
const ISO_BASIC = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(?:(\d{2})(?:[.,](\d+))?)?(Z|[+\- ]\d{2}(?::?\d{2})?)?$/i;

/**
 * A time bound of the spec: "ISO 8601 string or Unix ms".
 * - all digits: Unix ms (so a bare ISO year or a basic-format date like `20240115` is read as ms);
 * - otherwise ISO 8601 only, extended (`2024-01-15T10:00:00.123+02:00`) or basic (`20240115T100000Z`)
 *   format; a date alone is midnight UTC, a date-time without an offset is UTC (the server's time
 *   zone never matters); a space where the offset sign belongs is a `+` that the query string
 *   decoded. Impossible dates (`2024-02-30`) and anything else (`March 7, 2024`) are refused,
 *   where Date.parse would have guessed. Fractions beyond milliseconds are truncated.
 * Returns Unix ms, or null.
 */
export function parseTimeBound(v: string): number | null {
  if (/^\d+$/.test(v)) {
    const ms = Number(v);
    return ms <= MAX_MS ? ms : null;
  }
  const m = ISO_EXTENDED.exec(v) ?? ISO_BASIC.exec(v);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((x) => Number(x ?? 0)) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null;
  let ms = date.getTime() + ((h * 60 + mi) * 60 + s) * 1000 + Number((m[7] ?? "").padEnd(3, "0").slice(0, 3));
  const zone = m[8];
  if (zone && zone.toUpperCase() !== "Z") {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(3).replace(":", "") || "0");
    if (oh > 23 || om > 59) return null;
    ms -= (zone[0] === "-" ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  return Math.abs(ms) <= MAX_MS ? ms : null;
}

const time = (name: string) =>
  z.string().transform((v, ctx) => {
    const ms = parseTimeBound(v);
    if (ms === null) {
      ctx.addIssue({ code: "custom", message: `${name} must be an ISO 8601 date-time or Unix ms` });
      return z.NEVER;
    }
    return ms;
  });

/** The query of GET /v1/payments (and GraphQL `payments`); api/openapi documents it from this very schema. */
export const listPaymentsQuery = z
  .object({
    limit: z
      .string()
      .regex(/^\d+$/, "limit must be an integer between 1 and 100")
      .transform(Number)
      .pipe(z.number().int().min(1, "limit must be an integer between 1 and 100").max(100, "limit must be an integer between 1 and 100"))
      .optional(),
    cursor: z.string().optional(),
    status: z.enum(PAYMENT_STATUSES, { error: `status must be one of ${PAYMENT_STATUSES.join(", ")}` }).optional(),
    createdAfter: time("createdAfter").optional(),
    createdBefore: time("createdBefore").optional(),
    orderId: z.string().optional(),
  })
  .refine(
    (q) => q.createdAfter === undefined || q.createdBefore === undefined || q.createdBefore >= q.createdAfter,
    "createdBefore must be >= createdAfter",
  );

// The cursor (core/cursor.ts) is the (created_at, id) of the last row: keyset pagination, stable under inserts.

export type PaymentPage = { data: unknown[]; nextCursor: string | null; hasMore: boolean };

/** A payment row with its (not deleted) terminal, as the list reads it. */
type ListRow = PaymentRow & { t_id: string | null; t_code: string | null; t_name: string | null };
const TERMINAL_COLUMNS = "t.id AS t_id, t.code AS t_code, t.name AS t_name";
const PAYMENTS_WITH_TERMINAL = "payments p LEFT JOIN terminals t ON t.id = p.terminal_id AND t.deleted_at IS NULL";

/**
 * Rows as items of the list (serialize.ts paymentListItem): the head block of each chain a row was paid on, the
 * indexer's block (a waiting payment's confirmations count against it, as the payer page's), unexpected funds and
 * bridge orders, each read once for all the rows.
 */
async function listItems(deps: AppDeps, page: ListRow[], screening: FundsScreening) {
  const latest = new Map<number, bigint>();
  for (const chainId of new Set(page.filter((p) => p.payment_block_number).map((p) => p.chain_id))) {
    const client = deps.clients.get(chainId);
    if (client) latest.set(chainId, await client.getBlockNumber().catch(() => 0n));
  }
  const indexed = await indexedBlocks(deps.db, page);
  const unexpected = await unexpectedFundsOf(deps, page, screening);
  const bridges = await bridgeRefsOf(
    deps.db.pool,
    page.map((p) => p.id),
  );
  return page.map((p) =>
    paymentListItem(p, {
      terminal: p.t_id ? { terminalId: p.t_id, code: p.t_code!, name: p.t_name! } : null,
      latestBlock: latest.get(p.chain_id),
      indexedBlock: indexed.get(p.chain_id),
      unexpectedFunds: unexpected.get(p.id),
      bridge: bridges.get(p.id) ?? null,
    }),
  );
}

/** The spec's error code of every query error of the list. */
const invalidQuery = (message: string) => new Invalid(message, "invalid_query");

/**
 * GET /v1/payments and GraphQL `payments`: the caller, then the query (the same strings REST reads
 * from its query string), then the page. Throws Unauthorized or Invalid (code `invalid_query`).
 */
export async function listPayments(
  deps: AppDeps,
  caller: Caller,
  raw: Record<string, string>,
  screening: FundsScreening,
): Promise<PaymentPage> {
  const merchantId = (await authenticate(deps, caller)).id;
  const parsed = listPaymentsQuery.safeParse(raw);
  if (!parsed.success) throw invalidQuery(parsed.error.issues[0]?.message ?? "invalid query");
  const q = parsed.data;
  const limit = q.limit ?? 100;
  const where = ["p.merchant_id = $1"];
  const args: unknown[] = [merchantId];
  const add = (sql: string, v: unknown) => {
    args.push(v);
    where.push(sql.replace("?", `$${args.length}`));
  };
  if (q.status) add("p.status = ?", q.status);
  if (q.orderId !== undefined) add("p.order_id = ?", q.orderId);
  if (q.createdAfter !== undefined) add("p.created_at >= ?", new Date(q.createdAfter));
  // Inclusive to the millisecond: createdAt is reported in ms.
  if (q.createdBefore !== undefined && q.createdBefore < MAX_MS) add("p.created_at < ?", new Date(q.createdBefore + 1));
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    if (!c) throw invalidQuery("cursor is not a nextCursor of this list");
    args.push(c.at, c.id);
    where.push(`(p.created_at, p.id) < ($${args.length - 1}::timestamptz, $${args.length}::uuid)`);
  }
  args.push(limit + 1);
  const { rows } = await deps.db.pool.query<ListRow & { cursor_ts: string }>(
    `SELECT p.*, ${cursorAtSql("p.created_at")} AS cursor_ts, ${TERMINAL_COLUMNS}
       FROM ${PAYMENTS_WITH_TERMINAL}
      WHERE ${where.join(" AND ")}
      ORDER BY p.created_at DESC, p.id DESC
      LIMIT $${args.length}`,
    args,
  );
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const data = await listItems(deps, page, screening);
  const last = page[page.length - 1];
  return { data, nextCursor: hasMore && last ? encodeCursor({ at: last.cursor_ts, id: last.id }) : null, hasMore };
}

/**
 * GET /v1/payments/{paymentId} and GraphQL `payment`: one of the caller's payments, exactly as an item of the list.
 * Throws Unauthorized, or NotFound (`Payment not found`) for a malformed, unknown or another merchant's id.
 *
 * @example
 * const item = await getPayment(deps, { apiKey }, paymentId, screening); // { paymentId, status, fees, … }
 */
export async function getPayment(deps: AppDeps, caller: Caller, paymentId: string, screening: FundsScreening) {
  const merchantId = (await authenticate(deps, caller)).id;
  if (!isUuid(paymentId)) throw new NotFound("Payment not found");
  const { rows } = await deps.db.pool.query<ListRow>(
    `SELECT p.*, ${TERMINAL_COLUMNS} FROM ${PAYMENTS_WITH_TERMINAL} WHERE p.id = $1 AND p.merchant_id = $2`,
    [paymentId, merchantId],
  );
  if (!rows[0]) throw new NotFound("Payment not found");
  return (await listItems(deps, rows, screening))[0]!;
}
