import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { objectError } from "../../core/zod-issues.js";
import type { SecretBox } from "../../core/secret-box.js";
import { withTransaction, type Db } from "../../db/client.js";
import { isActiveField, validateWebhookBody, viewWebhookTarget } from "./config.js";
import { eventListField, VAULT_SUBSCRIPTIONS } from "./events.js";
import { boxOf, openField, sealField } from "../../core/sealed-fields.js";
import { generateWebhookSecret } from "./secret.js";
import { webhookUrlField, type WebhookUrlPolicy } from "./url-policy.js";
import { transitionDeliveries } from "./transition.js";

// Vault webhook target (`vault_webhook_configs`, one per vault; a merchant has one vault per API key), read
// by the dispatcher at send time through the delivery's `vault_id`. The Vault API
// (`/vault/v1/config/webhooks`, modules/vault/webhooks.ts) is built on these functions: PUT {url, events}
// -> putVaultWebhookConfig (the response includes the whole secret when it creates), POST -> regenerate,
// DELETE -> delete, GET -> get + viewVaultWebhookConfig (masked secret). `secret` is stored sealed with
// SECRET_KEY (./sealed.ts); these functions return rows opened.

type SealDeps = Pick<AppDeps, "db" | "config">;

/** A row of `vault_webhook_configs` with `secret` in plaintext (opened). */
export type VaultWebhookConfigRow = {
  id: string;
  merchant_id: string;
  vault_id: string;
  url: string;
  events: string[];
  secret: string | null;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
};

/** The webhook as the Vault API shows it: `secret` masked unless `revealSecret` (creation, regeneration). */
export function viewVaultWebhookConfig(row: VaultWebhookConfigRow, opts: { revealSecret?: boolean } = {}) {
  return { ...viewWebhookTarget(row, opts), createdAt: row.created_at.getTime(), updatedAt: row.updated_at.getTime() };
}

/**
 * PUT /vault/v1/config/webhooks: `{url, events?, isActive?}` and nothing else; events among deposit.completed,
 * deposit.failed, deposit.* (absent: `deposit.*` on creation, unchanged on update).
 */
export const putVaultWebhookBody = z.strictObject(
  { url: webhookUrlField, events: eventListField(VAULT_SUBSCRIPTIONS).optional(), isActive: isActiveField.optional() },
  { error: objectError("Body must be a JSON object") },
);

export type VaultWebhookInput = { url: string; events?: string[]; isActive?: boolean };

/** putVaultWebhookBody, with an HTTPS URL that is public unless allowed (validateWebhookBody). Throws Invalid. */
export async function validateVaultWebhookInput(raw: unknown, opts: WebhookUrlPolicy): Promise<VaultWebhookInput> {
  return validateWebhookBody(putVaultWebhookBody, raw, { ...opts, allowed: VAULT_SUBSCRIPTIONS });
}

const openRow = (box: SecretBox, row: VaultWebhookConfigRow): VaultWebhookConfigRow => ({
  ...row,
  secret: openField(box, "vault_webhook_configs.secret", row.vault_id, row.secret),
});

export async function getVaultWebhookConfig(deps: SealDeps, vaultId: string): Promise<VaultWebhookConfigRow | null> {
  const { rows } = await deps.db.pool.query<VaultWebhookConfigRow>(`SELECT * FROM vault_webhook_configs WHERE vault_id = $1`, [vaultId]);
  return rows[0] ? openRow(boxOf(deps.config), rows[0]) : null;
}

/**
 * Creates (with a new `whsec_` secret, or `secret: null` for an unsigned webhook) or updates url and the
 * given events/isActive of the vault's webhook. One statement: concurrent PUTs cannot create two.
 */
export async function putVaultWebhookConfig(
  deps: SealDeps,
  vault: { merchantId: string; vaultId: string },
  input: VaultWebhookInput & { secret?: string | null },
  now: number,
): Promise<{ created: boolean; row: VaultWebhookConfigRow }> {
  const box = boxOf(deps.config);
  const secret = sealField(
    box,
    "vault_webhook_configs.secret",
    vault.vaultId,
    input.secret === undefined ? generateWebhookSecret() : input.secret,
  );
  const { rows } = await deps.db.pool.query<VaultWebhookConfigRow & { created: boolean }>(
    `INSERT INTO vault_webhook_configs (merchant_id, vault_id, url, events, is_active, secret, created_at, updated_at)
     VALUES ($1, $2, $3, COALESCE($4, ARRAY['deposit.*']), COALESCE($5, true), $6, $7, $7)
     ON CONFLICT (vault_id) DO UPDATE SET url = EXCLUDED.url, events = COALESCE($4, vault_webhook_configs.events),
            is_active = COALESCE($5, vault_webhook_configs.is_active), updated_at = EXCLUDED.updated_at
     RETURNING *, (xmax = 0) AS created`,
    [vault.merchantId, vault.vaultId, input.url, input.events ?? null, input.isActive ?? null, secret, new Date(now)],
  );
  const { created, ...row } = rows[0]!;
  return { created, row: openRow(box, row) };
}

/** A new secret, effective at once: retries claimed after this sign with it. Null without a webhook. */
export async function regenerateVaultWebhookSecret(deps: SealDeps, vaultId: string, now: number): Promise<VaultWebhookConfigRow | null> {
  const secret = generateWebhookSecret();
  const { rows } = await deps.db.pool.query<VaultWebhookConfigRow>(
    `UPDATE vault_webhook_configs SET secret = $2, updated_at = $3 WHERE vault_id = $1 RETURNING *`,
    [vaultId, sealField(boxOf(deps.config), "vault_webhook_configs.secret", vaultId, secret), new Date(now)],
  );
  return rows[0] ? { ...rows[0], secret } : null;
}

/** Deletes the webhook; its pending deliveries are marked failed (as for payment webhooks). False without one. */
export async function deleteVaultWebhookConfig(db: Db, vaultId: string, now: number): Promise<boolean> {
  return withTransaction(db, async (client) => {
    const { rowCount } = await client.query(`DELETE FROM vault_webhook_configs WHERE vault_id = $1`, [vaultId]);
    if (!rowCount) return false;
    await transitionDeliveries(client, {
      where: "d.vault_id = $1 AND d.kind = 'vault'",
      from: ["pending"],
      to: "failed",
      set: "last_error = 'webhook configuration deleted', next_attempt_at = $2",
      reason: "webhook configuration deleted",
      at: now,
      params: [vaultId, new Date(now)],
    });
    return true;
  });
}
