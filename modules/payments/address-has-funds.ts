import type pg from "pg";
import { zeroAddress, type Address } from "viem";
import { moneyBlock } from "../../chains/money-block.js";
import type { AppDeps } from "../../core/deps.js";

type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

/** What the check needs of a payment (a PaymentRow fits). */
export type DepositAddress = { chain_id: number; token_address: string; recipient_address: string };

/**
 * Whether anything has reached a payment's deposit address, counted or not. That is:
 * - an indexed transfer of any token to the address, however shallow (not yet `blockConfirmations` deep), or
 * - for a native-coin payment, a balance above 0 at the node's head (never below the indexer's block: moneyBlock).
 *
 * It also answers true when that balance cannot be read because the chain has no client: an unknown balance is
 * treated as funds. An RPC error is thrown.
 *
 * This is the rule for closing a `pending` payment the payer may already have paid into:
 * - expire.ts: expirePayments;
 * - cancel.ts: cancelPayment, and the dashboard's `canCancel`.
 *
 * Call it with the payment row locked (`FOR UPDATE`, in the transaction that calls transition()). The detector
 * counts a deposit by transition() or an UPDATE of that row, so a deposit indexed before the lock was taken is seen
 * here. One indexed after the close is late funds, listed in `unexpectedFunds` and recoverable.
 *
 * @example
 * if (await addressHasFunds(deps, client, p)) throw new Conflict(HAS_UNCOUNTED_FUNDS);
 */
export async function addressHasFunds(deps: Pick<AppDeps, "db" | "clients">, db: Queryable, p: DepositAddress): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM "${deps.db.viewsSchema}".transfer WHERE chain_id = $1 AND "to" = lower($2) LIMIT 1`, [
    p.chain_id,
    p.recipient_address,
  ]);
  if (rows.length > 0) return true;
  if (p.token_address !== zeroAddress) return false;
  const client = deps.clients.get(p.chain_id);
  if (!client) return true;
  // A lagging provider answers "latest" with an older state (a deposit the detector has already seen not there yet: a
  // paid payment cancelled): pinned, it fails there and another answers.
  const blockNumber = await moneyBlock(deps.db, client, p.chain_id);
  return (await client.getBalance({ address: p.recipient_address as Address, blockNumber })) > 0n;
}
