import { and, inArray } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import { tokenMetadata } from "./schema.js";

/** Symbol and decimals of a token outside the registry, as its contract answered (null: not an ERC-20 field). */
export type StoredTokenMetadata = { chainId: number; address: string; symbol: string | null; decimals: number | null };

/**
 * The stored metadata of tokens outside the registry, read once from their contracts (token_metadata).
 *
 * @example
 * const rows = await storedTokenMetadata(deps.db, [{ chainId: 137, token: "0xabc…" }]);
 */
export async function storedTokenMetadata(db: Db, wanted: { chainId: number; token: string }[]): Promise<StoredTokenMetadata[]> {
  if (wanted.length === 0) return [];
  const m = tokenMetadata;
  return db.orm
    .select({ chainId: m.chainId, address: m.address, symbol: m.symbol, decimals: m.decimals })
    .from(m)
    .where(
      and(inArray(m.chainId, [...new Set(wanted.map((w) => w.chainId))]), inArray(m.address, [...new Set(wanted.map((w) => w.token))])),
    );
}

/** Stores what a token's contract answered; the first answer stays (a contract's metadata does not change). */
export async function storeTokenMetadata(db: Db, row: StoredTokenMetadata): Promise<void> {
  await db.orm.insert(tokenMetadata).values(row).onConflictDoNothing();
}
