import type pg from "pg";

/**
 * Moves the vault bound to one API key of a merchant to another key of the same merchant (a key rolled), in the
 * caller's transaction. Returns the vault moved, or null when the old key had none.
 *
 * @example
 * await moveVaultToKey(client, { merchantId, fromKeyId: oldKey, toKeyId: newKey, at: new Date() }); // { publicId, businessName }
 */
export async function moveVaultToKey(
  client: pg.ClientBase,
  move: { merchantId: string; fromKeyId: string; toKeyId: string; at: Date },
): Promise<{ publicId: string; businessName: string } | null> {
  const { rows } = await client.query<{ public_id: string; business_name: string }>(
    `UPDATE vault_configs SET api_key_id = $2, updated_at = $4 WHERE api_key_id = $1 AND merchant_id = $3 RETURNING public_id, business_name`,
    [move.fromKeyId, move.toKeyId, move.merchantId, move.at],
  );
  return rows[0] ? { publicId: rows[0].public_id, businessName: rows[0].business_name } : null;
}
