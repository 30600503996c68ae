import type pg from "pg";
import { withTransaction, type Db } from "../../db/client.js";
import { DEFAULT_PAYMENT_EVENTS, PAYMENT_EVENTS, parseEventList, type PaymentEventName } from "./events.js";
import { generateWebhookSecret, maskSecret } from "./secret.js";
import { checkWebhookTarget, parseWebhookUrl } from "./url-policy.js";

// Payment webhook configuration (one per merchant): the service side of `/v1/webhooks`.

export type WebhookConfigRow = {
  id: string;
  merchant_id: string;
  url: string;
  events: string[];
  is_active: boolean;
  secret: string | null;
  legacy_api_key: string | null;
  created_at: Date;
  updated_at: Date;
};

/** What GET and PUT return (`data`). `secret` is whole only right after it is generated. */
export type WebhookConfigView = {
  id: string;
  url: string;
  events: string[];
  isActive: boolean;
  /** `whsec_…`; masked (`whsec_********abcd`) except on creation and regeneration; null for legacy webhooks. */
  secret: string | null;
  /** `secret`: signed with the dedicated secret; `api-key`: a legacy webhook, signed with the API key below. */
  signing: "secret" | "api-key";
  /** Legacy webhooks: the first characters of the API key that signs (the key itself is never shown). */
  legacyApiKeyPrefix: string | null;
  createdAt: number;
  updatedAt: number;
};

export function viewWebhookConfig(row: WebhookConfigRow, opts: { revealSecret?: boolean } = {}): WebhookConfigView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    isActive: row.is_active,
    secret: opts.revealSecret ? row.secret : maskSecret(row.secret),
    signing: row.secret ? "secret" : "api-key",
    legacyApiKeyPrefix: !row.secret && row.legacy_api_key ? row.legacy_api_key.slice(0, 12) : null,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
  };
}

export type PutWebhookInput = { url: string; events?: PaymentEventName[]; isActive?: boolean; legacy?: true };

/** PUT body: `{url, events?, isActive?, legacy?}`; the URL must be HTTPS and (unless allowed) public. */
export async function validatePutWebhook(raw: unknown, opts: { allowPrivate: boolean }): Promise<{ ok: true; input: PutWebhookInput } | { ok: false; error: string }> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: false, error: "Body must be a JSON object" };
  const body = raw as Record<string, unknown>;
  const known = new Set(["url", "events", "isActive", "legacy"]);
  const extra = Object.keys(body).filter((k) => !known.has(k));
  if (extra.length) return { ok: false, error: `Unknown field${extra.length > 1 ? "s" : ""}: ${extra.join(", ")}` };
  const url = parseWebhookUrl(body.url);
  if (!url.ok) return url;
  const target = await checkWebhookTarget(url.url, opts);
  if (!target.ok) return target;
  const input: PutWebhookInput = { url: url.url.href };
  if (body.events !== undefined) {
    const events = parseEventList(body.events, PAYMENT_EVENTS);
    if (!events.ok) return events;
    input.events = events.events;
  }
  if (body.isActive !== undefined) {
    if (typeof body.isActive !== "boolean") return { ok: false, error: "isActive must be a boolean" };
    input.isActive = body.isActive;
  }
  if (body.legacy !== undefined) {
    if (body.legacy !== true) return { ok: false, error: "legacy may only be true (a webhook signed with the API key of this request)" };
    input.legacy = true;
  }
  return { ok: true, input };
}

export async function getWebhookConfig(db: Db, merchantId: string): Promise<WebhookConfigRow | null> {
  const { rows } = await db.pool.query<WebhookConfigRow>(`SELECT * FROM webhook_configs WHERE merchant_id = $1`, [merchantId]);
  return rows[0] ?? null;
}

export type PutResult = { ok: true; created: boolean; row: WebhookConfigRow } | { ok: false; status: 409; error: string };

/**
 * Creates or updates the merchant's webhook. Creation generates a `whsec_` secret, or with `legacy`
 * captures `apiKey` (the key of the request) as the signing key. Updates change only the given fields;
 * `legacy: true` on a legacy webhook re-binds it to `apiKey`, and is refused on a webhook with a secret.
 */
export async function putWebhookConfig(db: Db, merchantId: string, input: PutWebhookInput, apiKey: string | undefined, now: number): Promise<PutResult> {
  if (input.legacy && !apiKey) throw new Error("legacy webhooks need the API key of the request");
  const at = new Date(now);
  for (let i = 0; ; i++) {
    const out = await withTransaction(db, async (client): Promise<PutResult | null> => {
      const { rows } = await client.query<WebhookConfigRow>(`SELECT * FROM webhook_configs WHERE merchant_id = $1 FOR UPDATE`, [merchantId]);
      const current = rows[0];
      if (!current) {
        const inserted = await client.query<WebhookConfigRow>(
          `INSERT INTO webhook_configs (merchant_id, url, events, is_active, secret, legacy_api_key, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
           ON CONFLICT (merchant_id) DO NOTHING RETURNING *`,
          [merchantId, input.url, input.events ?? DEFAULT_PAYMENT_EVENTS, input.isActive ?? true, input.legacy ? null : generateWebhookSecret(), input.legacy ? apiKey : null, at],
        );
        return inserted.rows[0] ? { ok: true, created: true, row: inserted.rows[0] } : null; // null: a concurrent PUT created it
      }
      if (input.legacy && current.secret)
        return { ok: false, status: 409, error: "This webhook signs with a dedicated secret; it cannot be switched back to API-key (legacy) signing" };
      const updated = await client.query<WebhookConfigRow>(
        `UPDATE webhook_configs SET url = $2, events = COALESCE($3, events), is_active = COALESCE($4, is_active),
                legacy_api_key = COALESCE($5, legacy_api_key), updated_at = $6
          WHERE merchant_id = $1 RETURNING *`,
        [merchantId, input.url, input.events ?? null, input.isActive ?? null, input.legacy ? apiKey : null, at],
      );
      return { ok: true, created: false, row: updated.rows[0]! };
    });
    if (out) return out;
    if (i > 2) throw new Error("webhook config upsert kept conflicting");
  }
}

/** A new secret replaces the old one at once (a legacy webhook switches to it); null when there is no webhook. */
export async function regenerateWebhookSecret(db: Db, merchantId: string, now: number): Promise<WebhookConfigRow | null> {
  const { rows } = await db.pool.query<WebhookConfigRow>(
    `UPDATE webhook_configs SET secret = $2, legacy_api_key = NULL, updated_at = $3 WHERE merchant_id = $1 RETURNING *`,
    [merchantId, generateWebhookSecret(), new Date(now)],
  );
  return rows[0] ?? null;
}

/** Deletes the webhook; its pending payment deliveries are marked failed (they can be resent after a new PUT). */
export async function deleteWebhookConfig(db: Db, merchantId: string, now: number): Promise<boolean> {
  return withTransaction(db, async (client: pg.PoolClient) => {
    const { rowCount } = await client.query(`DELETE FROM webhook_configs WHERE merchant_id = $1`, [merchantId]);
    if (!rowCount) return false;
    await client.query(
      `UPDATE webhook_deliveries SET status = 'failed', last_error = 'webhook configuration deleted', next_attempt_at = $2
        WHERE merchant_id = $1 AND kind = 'payment' AND status = 'pending'`,
      [merchantId, new Date(now)],
    );
    return true;
  });
}
