import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { Invalid, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { Caller } from "../merchants/index.js";
import { keyOwner } from "../merchants/index.js";
import { decodeFeedCursor, encodeFeedCursor } from "./cursor.js";
import { feedHead, sequenceForRead } from "./sequence.js";

// GET /v1/events and GET /v1/events/{id}: every event of the caller's merchant in the order it was written (its
// position in the merchant's feed, modules/events/sequence.ts), with the webhook's body and id, whatever the webhook
// configuration and however its deliveries went: what a merchant reconciles from after an outage. Payment events are
// every key's of the merchant; a Vault event is seen with the key of its vault only (a vault belongs to one key, as in
// /vault/v1). Positions are counted per merchant: a cursor tells nothing of other merchants' events.

export const EVENTS_DEFAULT_LIMIT = 100;
const LIMIT_MESSAGE = "limit must be an integer between 1 and 100";
export const AFTER_MESSAGE = "after is not a nextCursor of this feed";
export const EVENT_NOT_FOUND = "Event not found";

/** The query of GET /v1/events (api/openapi documents it from this very schema); GET /v1/payments's limit rules. */
export const eventsQuery = z.object({
  limit: z
    .string()
    .regex(/^\d+$/, LIMIT_MESSAGE)
    .transform(Number)
    .pipe(z.number().int().min(1, LIMIT_MESSAGE).max(100, LIMIT_MESSAGE))
    .optional(),
  after: z.string().optional(),
});

/** One event of the feed. `payload` is the webhook body (as sent, signed, by every delivery of it); `id` its `webhook-id`. */
export type FeedEvent = {
  id: string;
  type: string;
  kind: "payment" | "vault";
  createdAt: number;
  payload: Record<string, unknown>;
};

export type EventPage = { data: FeedEvent[]; nextCursor: string; hasMore: boolean };

type Row = { position: string; id: string; type: string; kind: "payment" | "vault"; body: string; created_at: Date };

const view = (r: Row): FeedEvent => ({
  id: r.id,
  type: r.type,
  kind: r.kind,
  createdAt: r.created_at.getTime(),
  payload: JSON.parse(r.body) as Record<string, unknown>,
});

/** The spec's error code of every query error of a list (GET /v1/payments's). */
const invalidQuery = (message: string) => new Invalid(message, "invalid_query");

type FeedDeps = Pick<AppDeps, "db">;

/** The caller's merchant and the vault of its key (null without one). Unauthorized for anything but a live key. */
async function readerOf(deps: FeedDeps, caller: Caller): Promise<{ merchantId: string; vaultId: string | null }> {
  const owner = await keyOwner(deps, caller);
  const { rows } = await deps.db.pool.query<{ id: string }>(`SELECT id FROM vault_configs WHERE api_key_id = $1`, [owner.apiKeyId]);
  return { merchantId: owner.merchantId, vaultId: rows[0]?.id ?? null };
}

/** What the reader may see: the merchant's payment events and its key's vault's events. `$1` merchant, `$2` vault. */
const VISIBLE = `merchant_id = $1 AND (kind = 'payment' OR vault_id = $2::uuid)`;

/**
 * GET /v1/events `?after&limit`: the events after the cursor `after` (from the oldest kept without it), oldest first,
 * at most `limit` (default 100). `nextCursor` is always given: the position of the page's last event, or `after` itself
 * when nothing came after it; keep it and ask again (a poll). `hasMore`: more events are there right now.
 * `after=now` answers no events and the end of the feed as `nextCursor` (to follow only what comes next).
 * Throws Unauthorized, or Invalid (code `invalid_query`) with the query's first problem.
 */
export async function listEvents(deps: FeedDeps, caller: Caller, raw: Record<string, string>): Promise<EventPage> {
  const reader = await readerOf(deps, caller);
  const parsed = eventsQuery.safeParse(raw);
  if (!parsed.success) throw invalidQuery(parsed.error.issues[0]?.message ?? "invalid query");
  const limit = parsed.data.limit ?? EVENTS_DEFAULT_LIMIT;
  if (parsed.data.after === "now")
    return { data: [], nextCursor: encodeFeedCursor(await feedHead(deps.db, reader.merchantId)), hasMore: false };
  const after = parsed.data.after === undefined ? "0" : decodeFeedCursor(parsed.data.after);
  if (after === null) throw invalidQuery(AFTER_MESSAGE);
  await sequenceForRead(deps.db, reader.merchantId);
  const { rows } = await deps.db.pool.query<Row>(
    `SELECT position, id, type, kind, body, created_at FROM event_feed
      WHERE ${VISIBLE} AND position > $3::bigint
      ORDER BY position LIMIT $4`,
    [reader.merchantId, reader.vaultId, after, limit + 1],
  );
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  return { data: page.map(view), nextCursor: encodeFeedCursor(page.at(-1)?.position ?? after), hasMore };
}

/** GET /v1/events/{id}: one event of the caller's (the feed's visibility). NotFound `Event not found` otherwise. */
export async function getEvent(deps: FeedDeps, caller: Caller, id: string): Promise<FeedEvent> {
  const reader = await readerOf(deps, caller);
  if (!isUuid(id)) throw new NotFound(EVENT_NOT_FOUND);
  const { rows } = await deps.db.pool.query<Row>(
    `SELECT position, id, type, kind, body, created_at FROM event_feed WHERE ${VISIBLE} AND id = $3`,
    [reader.merchantId, reader.vaultId, id],
  );
  if (!rows[0]) throw new NotFound(EVENT_NOT_FOUND);
  return view(rows[0]);
}
