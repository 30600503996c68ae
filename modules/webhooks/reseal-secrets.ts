import type { AppDeps } from "../../core/deps.js";
import { boxOf, openField, SEALED_FIELDS, sealField } from "../../core/sealed-fields.js";

export type ResealResult = { resealed: number; unreadable: number };

/**
 * Seals under SECRET_KEY every stored webhook signing key (and every response kept for an idempotency key:
 * SEALED_FIELDS) that is not sealed with it yet: plaintext rows
 * written before sealing existed, and values sealed with a key now in SECRET_KEY_PREVIOUS. Run when the
 * processors start (the webhook dispatcher's first pass). Idempotent, and safe in several processes at
 * once: a row is replaced only while it still holds the value read (compare-and-set), so a concurrent
 * re-seal or a regenerated secret wins. A value that opens with no configured key is left as it is and
 * counted as unreadable. Without SECRET_KEY nothing is done.
 */
export async function resealWebhookSecrets(deps: Pick<AppDeps, "db" | "config">): Promise<ResealResult> {
  const box = boxOf(deps.config);
  const out: ResealResult = { resealed: 0, unreadable: 0 };
  if (!box.keyId) return out;
  for (const f of SEALED_FIELDS) {
    const { rows } = await deps.db.pool.query<{ id: string; owner: string; value: string }>(
      `SELECT id, ${f.owner} AS owner, ${f.column} AS value FROM ${f.table} WHERE ${f.column} IS NOT NULL AND ${f.column} NOT LIKE $1`,
      [`enc:v1:${box.keyId}:%`],
    );
    for (const r of rows) {
      let sealed: string | null;
      try {
        sealed = sealField(box, f.field, r.owner, openField(box, f.field, r.owner, r.value));
      } catch {
        out.unreadable++;
        continue;
      }
      const { rowCount } = await deps.db.pool.query(`UPDATE ${f.table} SET ${f.column} = $3 WHERE id = $1 AND ${f.column} = $2`, [
        r.id,
        r.value,
        sealed,
      ]);
      out.resealed += rowCount ?? 0;
    }
  }
  return out;
}
