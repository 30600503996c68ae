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
