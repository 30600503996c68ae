import { randomUUID } from "node:crypto";
import type { SecretBox } from "../../core/secret-box.js";
import type { Db } from "../../db/client.js";
import { openField, type SealedField } from "../../core/sealed-fields.js";

/** A claimed delivery with its webhook as it stands at claim time (just before sending). */
export type ClaimedDelivery = {
  id: string;
  merchant_id: string;
  kind: "payment" | "vault";
  event: string;
  body: string;
  attempts: number;
  max_attempts: number;
  claim_token: string;
  /** The webhook's current URL / state / signing key (payment: secret, else the legacy API key); null url = no webhook. */
  url: string | null;
  is_active: boolean | null;
  /** As stored: sealed (or legacy plaintext); `signingKeyOf` opens it. */
  signing_key: string | null;
  /** Where `signing_key` was read (its column) and the id of its row's owner (merchant or vault): what it was sealed for. */
  signing_field: SealedField | null;
  signing_owner: string | null;
};

/** The plaintext signing key of a claimed delivery (null: unsigned). Throws when it does not open (SECRET_KEY changed). */
export function signingKeyOf(box: SecretBox, d: ClaimedDelivery): string | null {
  if (d.signing_key === null || !d.signing_field || !d.signing_owner) return null;
  return openField(box, d.signing_field, d.signing_owner, d.signing_key);
}

/**
 * Claims up to `limit` due deliveries for `leaseMs`, in one statement (its own transaction, committed
 * before anything is sent): FOR UPDATE SKIP LOCKED makes concurrent replicas take disjoint rows. The
 * lease end goes to `locked_until` and `next_attempt_at`, so a claimed row leaves the due range (the
 * due index is scanned in order, never past in-flight rows) and comes back by itself if its claimer
 * dies before recording a result. The webhook's URL and signing key are read in the same statement, so
 * an attempt always signs with the secret current when it is claimed, a moment before it is sent: a
 * regenerated secret signs every retry claimed after the regeneration.
 */
export async function claimDueDeliveries(db: Db, now: number, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const { rows } = await db.pool.query<ClaimedDelivery>(
    `WITH due AS (
       SELECT id FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at <= $1
        ORDER BY next_attempt_at
        LIMIT $2
        FOR UPDATE SKIP LOCKED),
     claimed AS (
       UPDATE webhook_deliveries d SET locked_until = $3, next_attempt_at = $3, claim_token = $4
         FROM due WHERE d.id = due.id
       RETURNING d.id, d.merchant_id, d.vault_id, d.kind, d.event, COALESCE(d.body, d.payload::text) AS body, d.attempts, d.max_attempts, d.claim_token, d.next_attempt_at)
     SELECT c.id, c.merchant_id, c.kind, c.event, c.body, c.attempts, c.max_attempts, c.claim_token,
            COALESCE(p.url, v.url) AS url,
            COALESCE(p.is_active, v.is_active) AS is_active,
            CASE c.kind WHEN 'payment' THEN COALESCE(p.secret, p.legacy_api_key) ELSE v.secret END AS signing_key,
            CASE WHEN c.kind = 'payment' AND p.secret IS NOT NULL THEN 'webhook_configs.secret'
                 WHEN c.kind = 'payment' AND p.legacy_api_key IS NOT NULL THEN 'webhook_configs.legacy_api_key'
                 WHEN c.kind = 'vault' AND v.secret IS NOT NULL THEN 'vault_webhook_configs.secret' END AS signing_field,
            CASE c.kind WHEN 'payment' THEN c.merchant_id ELSE c.vault_id END AS signing_owner
       FROM claimed c
       LEFT JOIN webhook_configs p ON c.kind = 'payment' AND p.merchant_id = c.merchant_id
       LEFT JOIN vault_webhook_configs v ON c.kind = 'vault' AND v.vault_id = c.vault_id`,
    [new Date(now), limit, new Date(now + leaseMs), randomUUID()],
  );
  return rows;
}
