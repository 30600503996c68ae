import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { Invalid, NotFound } from "../../core/errors.js";
import type { Caller } from "../merchants/index.js";
import {
  deleteVaultWebhookConfig,
  getVaultWebhookConfig,
  putVaultWebhookConfig,
  regenerateVaultWebhookSecret,
  validateVaultWebhookInput,
  webhookUrlPolicy,
  viewVaultWebhookConfig,
} from "../webhooks/index.js";
import { vaultOfCaller } from "./config-access.js";
import { keyOwner } from "../merchants/index.js";
import { NOT_AN_OBJECT } from "./config-parse.js";

// /vault/v1/config/webhooks: the webhook of the caller's vault, with the secret rules of payment webhooks
// (`whsec_…`, whole only when created and when regenerated, masked on every other read).

type WebhookDeps = Pick<AppDeps, "db" | "config" | "now">;
export const VAULT_WEBHOOK_NOT_CONFIGURED = "Vault webhook not configured";

export type VaultWebhookView = ReturnType<typeof viewVaultWebhookConfig>;

/** GET: the webhook with its secret masked. */
export async function getVaultWebhook(deps: Pick<AppDeps, "db" | "config">, caller: Caller): Promise<VaultWebhookView> {
  const vault = await vaultOfCaller(deps, caller);
  const row = await getVaultWebhookConfig(deps, vault.id);
  if (!row) throw new NotFound(VAULT_WEBHOOK_NOT_CONFIGURED);
  return viewVaultWebhookConfig(row);
}

/** PUT `{url, events, isActive?}`: creates (whole secret, `created: true`) or updates (masked secret). */
export async function putVaultWebhook(deps: WebhookDeps, caller: Caller, body: unknown) {
  await keyOwner(deps, caller);
  const input = await validateVaultWebhookInput(body, webhookUrlPolicy(deps.config));
  const vault = await vaultOfCaller(deps, caller);
  const { created, row } = await putVaultWebhookConfig(deps, { merchantId: vault.merchantId, vaultId: vault.id }, input, deps.now());
  return { created, webhook: viewVaultWebhookConfig(row, { revealSecret: created }) };
}

const UNKNOWN_ACTION = 'Unknown action; expected no body or {"action": "regenerate-secret"}';

/** POST /vault/v1/config/webhooks: no body, `{}` or `{"action": "regenerate-secret"}` (the payment webhooks' form). */
export const regenerateVaultWebhookBody = z
  .strictObject(
    { action: z.literal("regenerate-secret", { error: UNKNOWN_ACTION }).optional() },
    { error: (iss) => (iss.code === "unrecognized_keys" ? UNKNOWN_ACTION : NOT_AN_OBJECT) },
  )
  .optional();

/**
 * POST: a new secret, shown whole once; the old one stops signing at once (retries included). The body may
 * be empty, `{}` or `{"action": "regenerate-secret"}` (the payment webhooks' form).
 */
export async function regenerateVaultWebhook(deps: WebhookDeps, caller: Caller, raw: unknown): Promise<VaultWebhookView> {
  await keyOwner(deps, caller);
  const parsed = regenerateVaultWebhookBody.safeParse(raw);
  // Not an object is the only issue of its body; every other problem is the unknown action.
  if (!parsed.success) throw new Invalid(parsed.error.issues[0]!.message);
  const vault = await vaultOfCaller(deps, caller);
  const row = await regenerateVaultWebhookSecret(deps, vault.id, deps.now());
  if (!row) throw new NotFound(VAULT_WEBHOOK_NOT_CONFIGURED);
  return viewVaultWebhookConfig(row, { revealSecret: true });
}

/** DELETE: removes the webhook; its pending deliveries are marked failed. */
export async function deleteVaultWebhook(deps: WebhookDeps, caller: Caller): Promise<{ deleted: true }> {
  const vault = await vaultOfCaller(deps, caller);
  if (!(await deleteVaultWebhookConfig(deps.db, vault.id, deps.now()))) throw new NotFound(VAULT_WEBHOOK_NOT_CONFIGURED);
  return { deleted: true };
}
