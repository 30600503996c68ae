import type pg from "pg";

/** What an address was handed out for. */
export type WatchedKind = "payment" | "gas_tank" | "vault" | "bridge";

export type WatchedAddress = {
  chainId: number;
  address: string;
  kind: WatchedKind;
  /** The payment id, the merchant id for a Gas Tank address, ... */
  ownerId: string;
  merchantId: string | null;
};

/**
 * Registers an address the indexer must watch (app table `watched_addresses`; its trigger NOTIFYs the indexer at
 * commit). Call it with the client of the transaction that creates the address, before the address is returned to
 * anyone: the indexer keeps only transfers to or from registered addresses, so a payer can never pay one it skips.
 * Idempotent (an address registered once stays with its first owner).
 */
export async function registerAddress(client: pg.ClientBase | pg.Pool, a: WatchedAddress): Promise<void> {
  await client.query(
    `INSERT INTO watched_addresses (chain_id, address, kind, owner_id, merchant_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    [a.chainId, a.address.toLowerCase(), a.kind, a.ownerId, a.merchantId],
  );
}

/**
 * Hands a watched address from one of `fromOwnerIds` to `toOwnerId` (same kind): a Vault user's row of one chain
 * takes the address that its row of another chain registered first. An address of any other owner stays theirs.
 *
 * @example await reassignAddress(client, { chainId: 137, address, kind: "vault", fromOwnerIds: [otherRowId], toOwnerId: rowId });
 */
export async function reassignAddress(
  client: pg.ClientBase,
  a: { chainId: number; address: string; kind: WatchedKind; fromOwnerIds: string[]; toOwnerId: string },
): Promise<void> {
  if (a.fromOwnerIds.length === 0) return;
  await client.query(
    `UPDATE watched_addresses SET owner_id = $4 WHERE chain_id = $1 AND address = $2 AND kind = $3 AND owner_id = ANY($5::text[])`,
    [a.chainId, a.address.toLowerCase(), a.kind, a.toOwnerId, a.fromOwnerIds],
  );
}

/** The owner an address is registered to on a chain, or null when it is not watched there. */
export async function watchedOwner(client: pg.ClientBase, chainId: number, address: string): Promise<string | null> {
  const { rows } = await client.query<{ owner_id: string }>(`SELECT owner_id FROM watched_addresses WHERE chain_id = $1 AND address = $2`, [
    chainId,
    address.toLowerCase(),
  ]);
  return rows[0]?.owner_id ?? null;
}
