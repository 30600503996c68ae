import { z } from "zod";
import { cursorAtSql, decodeCursor, encodeCursor, type Cursor } from "../../core/cursor.js";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { Db } from "../../db/client.js";
import { transitionDeliveries, type DeliveryStatus } from "./transition.js";

// Delivery logs (one row per event in `webhook_deliveries`, one per HTTP attempt in `webhook_attempts`)
// and manual resend.

export type { DeliveryStatus } from "./transition.js";
export const DELIVERY_STATUSES = ["pending", "success", "failed"] as const satisfies readonly DeliveryStatus[];

type DeliveryRow = {
  id: string;
  merchant_id: string;
  kind: "payment" | "vault";
  event: string;
  payment_id: string | null;
  deposit_id: string | null;
  status: DeliveryStatus;
  attempts: number;
  max_attempts: number;
  next_attempt_at: Date;
  locked_until: Date | null;
  last_http_status: number | null;
  last_response: string | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
  cursor: string;
};

export type DeliveryView = {
  id: string;
  kind: "payment" | "vault";
  event: string;
  paymentId: string | null;
  depositId: string | null;
  status: DeliveryStatus;
  /** HTTP status of the last attempt (null: no attempt yet, or no response: timeout, TLS, DNS…). */
  httpStatus: number | null;
  attempts: number;
  maxAttempts: number;
  /** Last response body, truncated to 1000 characters. */
  response: string | null;
  error: string | null;
  createdAt: number;
  lastAttemptAt: number | null;
  /** When the next automatic attempt is due (pending only). */
  nextAttemptAt: number | null;
  deliveredAt: number | null;
};

const ms = (d: Date | null) => (d ? d.getTime() : null);

function view(r: DeliveryRow): DeliveryView {
  return {
    id: r.id,
    kind: r.kind,
    event: r.event,
    paymentId: r.payment_id,
    depositId: r.deposit_id,
    status: r.status,
    httpStatus: r.last_http_status,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    response: r.last_response,
    error: r.last_error,
    createdAt: r.created_at.getTime(),
    lastAttemptAt: ms(r.last_attempt_at),
    nextAttemptAt: r.status === "pending" ? r.next_attempt_at.getTime() : null,
    deliveredAt: ms(r.delivered_at),
  };
}

const COLUMNS = `id, merchant_id, kind, event, payment_id, deposit_id, status, attempts, max_attempts, next_attempt_at, locked_until,
  last_http_status, last_response, last_error, last_attempt_at, created_at, delivered_at, ${cursorAtSql("created_at")} AS cursor`;

/** Whose deliveries a caller may see: a merchant's (REST: of one kind), or any (the operator's CLI). */
export type DeliveryScope = { merchantId?: string; kind?: "payment" | "vault" };

const NOT_FOUND = "Delivery not found";
/** A delivery in scope: `$2` the merchant, `$3` the kind; null for any. */
const IN_SCOPE = `($2::uuid IS NULL OR merchant_id = $2) AND ($3::text IS NULL OR kind = $3)`;

export type ListQuery = { limit?: string; cursor?: string; status?: string; paymentId?: string; event?: string };
type ListFilters = { limit: number; cursor?: Cursor; status?: DeliveryStatus; paymentId?: string; event?: string };

const LIMIT_MESSAGE = "limit must be an integer from 1 to 100";
/** GET /v1/webhooks/deliveries `?limit&status&paymentId&event&cursor` (query strings), checked in that order. */
export const deliveriesQuery = z.object({
  // Read as a JavaScript number (`" 5 "`, `5.0` are 5).
  limit: z
    .string({ error: LIMIT_MESSAGE })
    .refine((s) => Number.isInteger(Number(s)) && Number(s) >= 1 && Number(s) <= 100, LIMIT_MESSAGE)
    .transform(Number)
    .optional(),
  status: z.enum(DELIVERY_STATUSES, { error: `status must be one of ${DELIVERY_STATUSES.join(", ")}` }).optional(),
  // isUuid, spelled out for the JSON Schema (which has no case-insensitive flag).
  paymentId: z
    .string({ error: "paymentId must be a payment id" })
    .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "paymentId must be a payment id")
    .optional(),
  event: z.string().optional(),
  cursor: z
    .string({ error: "invalid cursor" })
    .transform((s, ctx) => decodeCursor(s) ?? (ctx.addIssue({ code: "custom", message: "invalid cursor", input: s }), z.NEVER))
    .optional(),
});

/** Query of the delivery log (deliveriesQuery): limit 1-100 (default 50). Throws Invalid with the first problem. */
export function parseListQuery(q: ListQuery): ListFilters {
  const parsed = deliveriesQuery.safeParse(q);
  if (!parsed.success) throw new Invalid(parsed.error.issues[0]!.message);
  const { limit = 50, ...rest } = parsed.data;
  return { limit, ...rest };
}

/** A merchant's deliveries, newest first (`GET /v1/webhooks/deliveries`, `webhook list`). */
export async function listDeliveries(
  db: Db,
  scope: DeliveryScope & { merchantId: string },
  query: ListQuery,
): Promise<{ deliveries: DeliveryView[]; nextCursor: string | null; hasMore: boolean }> {
  const f = parseListQuery(query);
  const where = ["merchant_id = $1"];
  const args: unknown[] = [scope.merchantId];
  const add = (sql: string, ...v: unknown[]) => {
    const n = args.length;
    where.push(sql.replace(/\$(\d)/g, (_, i) => `$${n + Number(i)}`));
    args.push(...v);
  };
  if (scope.kind) add("kind = $1", scope.kind);
  if (f.status) add("status = $1", f.status);
  if (f.paymentId) add("payment_id = $1", f.paymentId);
  if (f.event) add("event = $1", f.event);
  if (f.cursor) add("(created_at, id) < ($1::timestamptz, $2::uuid)", f.cursor.at, f.cursor.id);
  args.push(f.limit + 1);
  const { rows } = await db.pool.query<DeliveryRow>(
    `SELECT ${COLUMNS} FROM webhook_deliveries WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT $${args.length}`,
    args,
  );
  const hasMore = rows.length > f.limit;
  const page = rows.slice(0, f.limit);
  const last = page.at(-1);
  return { deliveries: page.map(view), nextCursor: hasMore && last ? encodeCursor({ at: last.cursor, id: last.id }) : null, hasMore };
}

export type AttemptView = {
  attempt: number;
  url: string;
  httpStatus: number | null;
  response: string | null;
  error: string | null;
  durationMs: number | null;
  at: number;
};

/** One delivery with its body and every attempt; NotFound when it is outside the scope (or does not exist). */
export async function getDelivery(
  db: Db,
  id: string,
  scope: DeliveryScope = {},
): Promise<DeliveryView & { payload: unknown; attemptLog: AttemptView[] }> {
  if (!isUuid(id)) throw new NotFound(NOT_FOUND);
  const { rows } = await db.pool.query<DeliveryRow & { payload: unknown }>(
    `SELECT ${COLUMNS}, payload FROM webhook_deliveries WHERE id = $1 AND ${IN_SCOPE}`,
    [id, scope.merchantId ?? null, scope.kind ?? null],
  );
  const row = rows[0];
  if (!row) throw new NotFound(NOT_FOUND);
  const attempts = await db.pool.query(
    `SELECT attempt, url, http_status, response, error, duration_ms, created_at FROM webhook_attempts WHERE delivery_id = $1 ORDER BY id`,
    [id],
  );
  return {
    ...view(row),
    payload: row.payload,
    attemptLog: attempts.rows.map((a) => ({
      attempt: a.attempt,
      url: a.url,
      httpStatus: a.http_status,
      response: a.response,
      error: a.error,
      durationMs: a.duration_ms,
      at: new Date(a.created_at).getTime(),
    })),
  };
}

/**
 * Manual resend: the delivery becomes `pending` and due now, with one more attempt allowed (a failed
 * resend goes back to `failed`; no automatic retries). A pending delivery is just made due now. Refused
 * (Conflict) while an attempt is in flight, and when the delivery's webhook is missing or inactive.
 * The resend keeps the delivery's `webhook-id`, so a receiver that already processed it can deduplicate.
 */
export async function resendDelivery(db: Db, id: string, now: number, scope: DeliveryScope = {}): Promise<DeliveryView> {
  if (!isUuid(id)) throw new NotFound(NOT_FOUND);
  const at = new Date(now);
  const { rows } = await db.pool.query<{ has_config: boolean; busy: boolean }>(
    `SELECT (locked_until IS NOT NULL AND locked_until > $4) AS busy,
            CASE kind WHEN 'payment' THEN EXISTS (SELECT 1 FROM webhook_configs c WHERE c.merchant_id = d.merchant_id AND c.is_active)
                      ELSE EXISTS (SELECT 1 FROM vault_webhook_configs v WHERE v.vault_id = d.vault_id AND v.is_active) END AS has_config
       FROM webhook_deliveries d WHERE id = $1 AND ${IN_SCOPE}`,
    [id, scope.merchantId ?? null, scope.kind ?? null, at],
  );
  const d = rows[0];
  if (!d) throw new NotFound(NOT_FOUND);
  if (!d.has_config) throw new Conflict("No active webhook is configured for this delivery");
  const inFlight = "An attempt of this delivery is in progress";
  if (d.busy) throw new Conflict(inFlight);
  const updated = await transitionDeliveries<DeliveryRow>(db.pool, {
    where: "d.id = $1 AND (d.locked_until IS NULL OR d.locked_until <= $2)",
    from: DELIVERY_STATUSES,
    to: "pending",
    set: `max_attempts = CASE WHEN d.status = 'pending' THEN GREATEST(d.max_attempts, d.attempts + 1) ELSE d.attempts + 1 END,
          next_attempt_at = $2, locked_until = NULL, claim_token = NULL`,
    reason: "manual resend",
    at: now,
    returning: COLUMNS,
    params: [id, at],
  });
  if (!updated.rows[0]) throw new Conflict(inFlight);
  return view(updated.rows[0]);
}
