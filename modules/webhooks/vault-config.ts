import type { Db } from "../../db/client.js";
import { validateWebhookFields, viewWebhookTarget } from "./config.js";
import { VAULT_SUBSCRIPTIONS } from "./events.js";
import { generateWebhookSecret } from "./secret.js";

// Vault webhook target (`vault_webhook_configs`, one per merchant), read by the dispatcher at send time.
// The Vault API (`/vault/v1/config/webhooks`, GET/PUT/DELETE/POST) is built on these functions:
// PUT {url, events} -> putVaultWebhookConfig (the response includes the secret), POST -> regenerate,
// DELETE -> delete, GET -> get + viewVaultWebhookConfig (masked secret).

export type VaultWebhookConfigRow = {
  id: string;
  merchant_id: string;
  url: string;
  events: string[];
  secret: string | null;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
};

export function viewVaultWebhookConfig(row: VaultWebhookConfigRow, opts: { revealSecret?: boolean } = {}) {
  return { ...viewWebhookTarget(row, opts), createdAt: row.created_at.getTime(), updatedAt: row.updated_at.getTime() };
}

export type VaultWebhookInput = { url: string; events: string[]; isActive?: boolean };

/** `{url, events, isActive?}`: HTTPS, public unless allowed, events among deposit.completed, deposit.failed, deposit.* (default). Throws Invalid. */
export async function validateVaultWebhookInput(raw: unknown, opts: { allowPrivate: boolean }): Promise<VaultWebhookInput> {
  const { url, events, isActive } = await validateWebhookFields(raw, {
    ...opts,
    allowed: VAULT_SUBSCRIPTIONS,
    defaultEvents: ["deposit.*"],
  });
  return { url, events: events!, isActive };
}

export async function getVaultWebhookConfig(db: Db, merchantId: string): Promise<VaultWebhookConfigRow | null> {
  const { rows } = await db.pool.query<VaultWebhookConfigRow>(`SELECT * FROM vault_webhook_configs WHERE merchant_id = $1`, [merchantId]);
  return rows[0] ?? null;
}

/** Creates (with a new `whsec_` secret, or `secret: null` for an unsigned webhook) or updates url/events/isActive. */
export async function putVaultWebhookConfig(
  db: Db,
  merchantId: string,
  input: VaultWebhookInput & { secret?: string | null },
  now: number,
): Promise<{ created: boolean; row: VaultWebhookConfigRow }> {
  const secret = input.secret === undefined ? generateWebhookSecret() : input.secret;
  const { rows } = await db.pool.query<VaultWebhookConfigRow & { created: boolean }>(
    `INSERT INTO vault_webhook_configs (merchant_id, url, events, is_active, secret, created_at, updated_at)
     VALUES ($1, $2, $3, COALESCE($4, true), $5, $6, $6)
     ON CONFLICT (merchant_id) DO UPDATE SET url = EXCLUDED.url, events = EXCLUDED.events,
            is_active = COALESCE($4, vault_webhook_configs.is_active), updated_at = EXCLUDED.updated_at
     RETURNING *, (xmax = 0) AS created`,
    [merchantId, input.url, input.events, input.isActive ?? null, secret, new Date(now)],
  );
  const { created, ...row } = rows[0]!;
  return { created, row };
}

export async function regenerateVaultWebhookSecret(db: Db, merchantId: string, now: number): Promise<VaultWebhookConfigRow | null> {
  const { rows } = await db.pool.query<VaultWebhookConfigRow>(
    `UPDATE vault_webhook_configs SET secret = $2, updated_at = $3 WHERE merchant_id = $1 RETURNING *`,
    [merchantId, generateWebhookSecret(), new Date(now)],
  );
  return rows[0] ?? null;
}

export async function deleteVaultWebhookConfig(db: Db, merchantId: string): Promise<boolean> {
  const { rowCount } = await db.pool.query(`DELETE FROM vault_webhook_configs WHERE merchant_id = $1`, [merchantId]);
  return (rowCount ?? 0) > 0;
}
