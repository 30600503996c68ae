import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { withTransaction } from "../../db/client.js";
import type { SecretBox } from "../../core/secret-box.js";
import { DEFAULT_PAYMENT_EVENTS, PAYMENT_EVENTS, parseEventList, type PaymentEventName } from "./events.js";
import { boxOf, openField, sealField } from "./sealed.js";
import { generateWebhookSecret, maskSecret } from "./secret.js";
import { checkWebhookTarget, parseWebhookUrl } from "./url-policy.js";

// Payment webhook configuration (one per merchant): the service side of `/v1/webhooks`. `secret` and
// `legacy_api_key` are stored sealed with SECRET_KEY (./sealed.ts); the functions here return rows opened.

/** A row of `webhook_configs` with `secret` and `legacy_api_key` in plaintext (opened). */
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

/** The fields both webhook kinds show, in this order. */
export function viewWebhookTarget(
  row: Pick<WebhookConfigRow, "id" | "url" | "events" | "is_active" | "secret">,
  opts: { revealSecret?: boolean },
) {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    isActive: row.is_active,
    secret: opts.revealSecret ? row.secret : maskSecret(row.secret),
  };
}

export function viewWebhookConfig(row: WebhookConfigRow, opts: { revealSecret?: boolean } = {}): WebhookConfigView {
  return {
    ...viewWebhookTarget(row, opts),
    signing: row.secret ? "secret" : "api-key",
    legacyApiKeyPrefix: !row.secret && row.legacy_api_key ? row.legacy_api_key.slice(0, 12) : null,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
  };
}

/** A stored row, its sealed fields opened. */
export function openWebhookConfigRow(box: SecretBox, row: WebhookConfigRow): WebhookConfigRow {
  return {
    ...row,
    secret: openField(box, "webhook_configs.secret", row.merchant_id, row.secret),
    legacy_api_key: openField(box, "webhook_configs.legacy_api_key", row.merchant_id, row.legacy_api_key),
  };
}

const unwrap = <T extends { ok: true }>(r: T | { ok: false; error: string }): T => {
  if (!r.ok) throw new Invalid(r.error);
  return r;
};

/**
 * What both webhook kinds accept, checked in this order: a JSON object (with `known`, no other field), an
 * HTTPS `url` that is public unless private targets are allowed, `events` among `allowed` (null or absent:
 * `defaultEvents` where given), `isActive`.
 * Throws Invalid with the first problem.
 */
export async function validateWebhookFields<T extends string>(
  raw: unknown,
  opts: { allowPrivate: boolean; allowed: readonly T[]; defaultEvents?: readonly T[]; known?: readonly string[] },
): Promise<{ body: Record<string, unknown>; url: string; events?: T[]; isActive?: boolean }> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Invalid("Body must be a JSON object");
  const body = raw as Record<string, unknown>;
  const extra = opts.known ? Object.keys(body).filter((k) => !opts.known!.includes(k)) : [];
  if (extra.length) throw new Invalid(`Unknown field${extra.length > 1 ? "s" : ""}: ${extra.join(", ")}`);
  const url = unwrap(parseWebhookUrl(body.url)).url;
  unwrap(await checkWebhookTarget(url, opts));
  const given = opts.defaultEvents ? (body.events ?? opts.defaultEvents) : body.events;
  const events = given === undefined ? undefined : unwrap(parseEventList(given, opts.allowed)).events;
  if (body.isActive !== undefined && typeof body.isActive !== "boolean") throw new Invalid("isActive must be a boolean");
  return { body, url: url.href, events, isActive: body.isActive as boolean | undefined };
}

export type PutWebhookInput = { url: string; events?: PaymentEventName[]; isActive?: boolean; legacy?: true };

/** PUT body: `{url, events?, isActive?, legacy?}`; the URL must be HTTPS and (unless allowed) public. Throws Invalid. */
export async function validatePutWebhook(raw: unknown, opts: { allowPrivate: boolean }): Promise<PutWebhookInput> {
  const { body, url, events, isActive } = await validateWebhookFields(raw, {
    ...opts,
    allowed: PAYMENT_EVENTS,
    known: ["url", "events", "isActive", "legacy"],
  });
  const input: PutWebhookInput = { url };
  if (events !== undefined) input.events = events;
  if (isActive !== undefined) input.isActive = isActive;
  if (body.legacy !== undefined) {
    if (body.legacy !== true) throw new Invalid("legacy may only be true (a webhook signed with the API key of this request)");
    input.legacy = true;
  }
  return input;
}

/**
 * Creates or updates the merchant's webhook. Creation generates a `whsec_` secret, or with `legacy`
 * captures `apiKey` (the key of the request) as the signing key. Updates change only the given fields;
 * `legacy: true` on a legacy webhook re-binds it to `apiKey`, and is refused (Conflict) on a webhook with a secret.
 */
export async function putWebhookConfig(
  deps: Pick<AppDeps, "db" | "config">,
  merchantId: string,
  input: PutWebhookInput,
  apiKey: string | undefined,
  now: number,
): Promise<{ created: boolean; row: WebhookConfigRow }> {
  if (input.legacy && !apiKey) throw new Error("legacy webhooks need the API key of the request");
  const box = boxOf(deps.config);
  const legacyKey = input.legacy ? sealField(box, "webhook_configs.legacy_api_key", merchantId, apiKey!) : null;
  const at = new Date(now);
  for (let i = 0; ; i++) {
    const out = await withTransaction(deps.db, async (client) => {
      const { rows } = await client.query<WebhookConfigRow>(`SELECT * FROM webhook_configs WHERE merchant_id = $1 FOR UPDATE`, [
        merchantId,
      ]);
      const current = rows[0];
      if (!current) {
        const inserted = await client.query<WebhookConfigRow>(
          `INSERT INTO webhook_configs (merchant_id, url, events, is_active, secret, legacy_api_key, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
           ON CONFLICT (merchant_id) DO NOTHING RETURNING *`,
          [
            merchantId,
            input.url,
            input.events ?? DEFAULT_PAYMENT_EVENTS,
            input.isActive ?? true,
            input.legacy ? null : sealField(box, "webhook_configs.secret", merchantId, generateWebhookSecret()),
            legacyKey,
            at,
          ],
        );
        return inserted.rows[0] ? { created: true, row: inserted.rows[0] } : null; // null: a concurrent PUT created it
      }
      if (input.legacy && current.secret)
        throw new Conflict("This webhook signs with a dedicated secret; it cannot be switched back to API-key (legacy) signing");
      const updated = await client.query<WebhookConfigRow>(
        `UPDATE webhook_configs SET url = $2, events = COALESCE($3, events), is_active = COALESCE($4, is_active),
                legacy_api_key = COALESCE($5, legacy_api_key), updated_at = $6
          WHERE merchant_id = $1 RETURNING *`,
        [merchantId, input.url, input.events ?? null, input.isActive ?? null, legacyKey, at],
      );
      return { created: false, row: updated.rows[0]! };
    });
    if (out) return { created: out.created, row: openWebhookConfigRow(box, out.row) };
    if (i > 2) throw new Error("webhook config upsert kept conflicting");
  }
}

// The operations of `/v1/webhooks` (the caller is the merchant of the request's API key).

type WebhookDeps = Pick<AppDeps, "db" | "config" | "now">;
const NOT_CONFIGURED = "Webhook not configured";

/** The configuration with its secret masked. */
export async function getWebhook(deps: Pick<AppDeps, "db" | "config">, merchantId: string): Promise<WebhookConfigView> {
  const { rows } = await deps.db.pool.query<WebhookConfigRow>(`SELECT * FROM webhook_configs WHERE merchant_id = $1`, [merchantId]);
  if (!rows[0]) throw new NotFound(NOT_CONFIGURED);
  return viewWebhookConfig(openWebhookConfigRow(boxOf(deps.config), rows[0]));
}

/** Validates and saves the PUT body; a created webhook shows its whole secret, once. */
export async function putWebhook(deps: WebhookDeps, caller: { merchantId: string; apiKey?: string }, body: unknown) {
  const input = await validatePutWebhook(body, { allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE === true });
  const { created, row } = await putWebhookConfig(deps, caller.merchantId, input, caller.apiKey, deps.now());
  return { created, webhook: viewWebhookConfig(row, { revealSecret: created }) };
}

/**
 * `{action: "regenerate-secret"}`: a new secret replaces the old one at once, queued retries included
 * (a legacy webhook switches to it).
 */
export async function regenerateWebhookSecret(deps: WebhookDeps, merchantId: string, body: unknown): Promise<{ secret: string | null }> {
  const action = (body as { action?: unknown } | null)?.action;
  if (action !== "regenerate-secret") throw new Invalid('Unknown action; expected {"action": "regenerate-secret"}');
  const secret = generateWebhookSecret();
  const { rowCount } = await deps.db.pool.query(
    `UPDATE webhook_configs SET secret = $2, legacy_api_key = NULL, updated_at = $3 WHERE merchant_id = $1`,
    [merchantId, sealField(boxOf(deps.config), "webhook_configs.secret", merchantId, secret), new Date(deps.now())],
  );
  if (!rowCount) throw new NotFound(NOT_CONFIGURED);
  return { secret };
}

/** Deletes the webhook; its pending payment deliveries are marked failed (they can be resent after a new PUT). */
export async function deleteWebhook(deps: WebhookDeps, merchantId: string): Promise<{ deleted: true }> {
  const at = new Date(deps.now());
  return withTransaction(deps.db, async (client) => {
    const { rowCount } = await client.query(`DELETE FROM webhook_configs WHERE merchant_id = $1`, [merchantId]);
    if (!rowCount) throw new NotFound(NOT_CONFIGURED);
    await client.query(
      `UPDATE webhook_deliveries SET status = 'failed', last_error = 'webhook configuration deleted', next_attempt_at = $2
        WHERE merchant_id = $1 AND kind = 'payment' AND status = 'pending'`,
      [merchantId, at],
    );
    return { deleted: true as const };
  });
}
