import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { firstIssue, objectError, UNKNOWN_FIELDS } from "../../core/zod-issues.js";
import { withTransaction } from "../../db/client.js";
import type { SecretBox } from "../../core/secret-box.js";
import { DEFAULT_PAYMENT_EVENTS, eventListError, eventListField, PAYMENT_EVENTS } from "./events.js";
import { boxOf, openField, sealField } from "../../core/sealed-fields.js";
import { generateWebhookSecret, maskSecret } from "./secret.js";
import { checkWebhookTarget, localWebhookUrlField, webhookUrlField, webhookUrlPolicy, type WebhookUrlPolicy } from "./url-policy.js";
import { transitionDeliveries } from "./transition.js";

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

/** `isActive` of a webhook body. */
export const isActiveField = z.boolean({ error: "isActive must be a boolean" });

/**
 * PUT /v1/webhooks: `{url, events?, isActive?, legacy?}` and nothing else; validatePutWebhook reads bodies with it
 * (api/openapi documents it from this object).
 */
export const putWebhookBody = z.strictObject(
  {
    url: webhookUrlField,
    events: eventListField(PAYMENT_EVENTS).optional(),
    isActive: isActiveField.optional(),
    legacy: z.literal(true, { error: "legacy may only be true (a webhook signed with the API key of this request)" }).optional(),
  },
  { error: objectError("Body must be a JSON object") },
);

/** POST /v1/webhooks: `{action: "regenerate-secret"}` (other fields are ignored). */
export const regenerateSecretBody = z.object(
  { action: z.literal("regenerate-secret", { error: 'Unknown action; expected {"action": "regenerate-secret"}' }) },
  { error: 'Unknown action; expected {"action": "regenerate-secret"}' },
);

/** The order the checks of a webhook body report in: unknown fields, `url` (then where it points), then the rest. */
const WEBHOOK_BODY_ORDER = [UNKNOWN_FIELDS, "url", "events", "isActive", "legacy"];

/**
 * A webhook body (both kinds) read with `schema`, whose `url` is webhookUrlField and `events` an eventListField of
 * `allowed`. The first problem is thrown as Invalid, in the order of WEBHOOK_BODY_ORDER; where the URL points
 * (public unless private targets are allowed: DNS) is checked after its syntax and before the other fields.
 * @example await validateWebhookBody(putWebhookBody, {url: "https://shop.example/h"}, {allowPrivate: false, allowed: PAYMENT_EVENTS})
 */
export async function validateWebhookBody<S extends z.ZodObject<{ url: typeof webhookUrlField }>>(
  schema: S,
  raw: unknown,
  opts: { allowPrivate: boolean; localHttp?: boolean; allowed: readonly string[] },
): Promise<z.output<S>> {
  // Local mode (webhookUrlPolicy): the same body, its `url` read with the local rule (http:// to this machine too).
  const urlField = opts.localHttp ? localWebhookUrlField : webhookUrlField;
  const parsed = (opts.localHttp ? schema.extend({ url: localWebhookUrlField }) : schema).safeParse(raw) as z.ZodSafeParseResult<
    z.output<S>
  >;
  const issues = parsed.success ? [] : parsed.error.issues;
  const first = issues.length ? firstIssue(issues, WEBHOOK_BODY_ORDER) : undefined;
  // Not an object, unknown fields, a bad url: reported before the URL's target is looked up.
  if (first && (first.path.length === 0 || first.path[0] === "url")) throw new Invalid(first.message);
  const url = new URL(urlField.parse((raw as Record<string, unknown>).url));
  const target = await checkWebhookTarget(url, opts);
  if (!target.ok) throw new Invalid(target.error);
  if (!parsed.success) {
    if (first!.path[0] !== "events") throw new Invalid(first!.message);
    const ofEvents = issues.filter((i) => i.path[0] === "events").map((i) => ({ ...i, path: i.path.slice(1) }));
    throw new Invalid(eventListError(ofEvents, (raw as Record<string, unknown>).events, opts.allowed));
  }
  return parsed.data;
}

export type PutWebhookInput = z.output<typeof putWebhookBody>;

/** PUT body (putWebhookBody); the URL must be HTTPS (in local mode, or http:// to this machine) and (unless allowed) public. Throws Invalid. */
export async function validatePutWebhook(raw: unknown, opts: WebhookUrlPolicy): Promise<PutWebhookInput> {
  return validateWebhookBody(putWebhookBody, raw, { ...opts, allowed: PAYMENT_EVENTS });
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
  const input = await validatePutWebhook(body, webhookUrlPolicy(deps.config));
  const { created, row } = await putWebhookConfig(deps, caller.merchantId, input, caller.apiKey, deps.now());
  return { created, webhook: viewWebhookConfig(row, { revealSecret: created }) };
}

/**
 * `{action: "regenerate-secret"}`: a new secret replaces the old one at once, queued retries included
 * (a legacy webhook switches to it).
 */
export async function regenerateWebhookSecret(deps: WebhookDeps, merchantId: string, body: unknown): Promise<{ secret: string | null }> {
  const parsed = regenerateSecretBody.safeParse(body);
  if (!parsed.success) throw new Invalid(parsed.error.issues[0]!.message);
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
    await transitionDeliveries(client, {
      where: "d.merchant_id = $1 AND d.kind = 'payment'",
      from: ["pending"],
      to: "failed",
      set: "last_error = 'webhook configuration deleted', next_attempt_at = $2",
      reason: "webhook configuration deleted",
      at: at.getTime(),
      params: [merchantId, at],
    });
    return { deleted: true as const };
  });
}
