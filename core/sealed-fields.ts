import type { Config } from "./config.js";
import { secretBoxOf, type SecretBox } from "./secret-box.js";

// Secrets stored sealed (core/secret-box.ts, key SECRET_KEY): webhook signing keys: the `whsec_…` secrets of
// payment and Vault webhooks and a legacy webhook's API key. Each value is bound to its column and its
// row's owner (merchant or vault), so a sealed value copied into another row does not open there. The responses kept
// for idempotency keys too (modules/idempotency/store.ts): a regenerate-secret response holds a secret, bound to
// the key's use (its row id).

/** The columns that hold sealed values, by the id of their row's owner. */
export const SEALED_FIELDS: { field: SealedField; table: string; column: string; owner: string }[] = [
  { field: "webhook_configs.secret", table: "webhook_configs", column: "secret", owner: "merchant_id" },
  { field: "webhook_configs.legacy_api_key", table: "webhook_configs", column: "legacy_api_key", owner: "merchant_id" },
  { field: "vault_webhook_configs.secret", table: "vault_webhook_configs", column: "secret", owner: "vault_id" },
  { field: "idempotency_keys.response_body", table: "idempotency_keys", column: "response_body", owner: "id" },
];

export type SealedField =
  "webhook_configs.secret" | "webhook_configs.legacy_api_key" | "vault_webhook_configs.secret" | "idempotency_keys.response_body";

const context = (field: SealedField, ownerId: string) => `${field}:${ownerId}`;

/** The box of the configuration's SECRET_KEY (and SECRET_KEY_PREVIOUS). */
export const boxOf = (config: Pick<Config, "SECRET_KEY" | "SECRET_KEY_PREVIOUS">): SecretBox => secretBoxOf(config);

export function sealField(box: SecretBox, field: SealedField, ownerId: string, value: string | null): string | null {
  return value === null ? null : box.seal(value, context(field, ownerId));
}

/** The plaintext of a stored value (sealed, or legacy plaintext as stored before sealing). Throws when it does not open. */
export function openField(box: SecretBox, field: SealedField, ownerId: string, stored: string | null): string | null {
  return stored === null ? null : box.open(stored, context(field, ownerId));
}
