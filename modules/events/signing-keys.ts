import type { Config } from "../../core/config.js";
import type { Db } from "../../db/client.js";
import { keyOwner } from "../merchants/index.js";
import { boxOf, openField } from "../../core/sealed-fields.js";

// The keys real deliveries sign with, for the holder of an API key: what the sandbox's `listen` (cli/sandbox) signs
// forwarded events with, so a local receiver checks them with the very secret production deliveries use. Read from
// the database (the operator's CLI, which has it), opened with SECRET_KEY.

export type SigningKeys = {
  /** The payment webhook's secret (a legacy webhook's API key), as claim.ts picks it; null without a webhook. */
  payment: string | null;
  /** The secret of the Vault webhook of the key's vault; null without one (or a webhook without a secret). */
  vault: string | null;
};

/** The signing keys of the key's merchant and vault. Throws Unauthorized for an unknown key, and when a key does not open. */
export async function signingKeysOf(
  deps: { db: Db; config: Pick<Config, "SECRET_KEY" | "SECRET_KEY_PREVIOUS"> },
  apiKey: string,
): Promise<SigningKeys> {
  const owner = await keyOwner(deps, { apiKey });
  const box = boxOf(deps.config);
  const payment = await deps.db.pool.query<{ secret: string | null; legacy_api_key: string | null }>(
    `SELECT secret, legacy_api_key FROM webhook_configs WHERE merchant_id = $1`,
    [owner.merchantId],
  );
  const vault = await deps.db.pool.query<{ vault_id: string; secret: string | null }>(
    `SELECT w.vault_id, w.secret FROM vault_webhook_configs w JOIN vault_configs c ON c.id = w.vault_id WHERE c.api_key_id = $1`,
    [owner.apiKeyId],
  );
  const p = payment.rows[0];
  const v = vault.rows[0];
  return {
    payment: p
      ? (openField(box, "webhook_configs.secret", owner.merchantId, p.secret) ??
        openField(box, "webhook_configs.legacy_api_key", owner.merchantId, p.legacy_api_key))
      : null,
    vault: v ? openField(box, "vault_webhook_configs.secret", v.vault_id, v.secret) : null,
  };
}
