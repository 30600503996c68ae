import { zeroAddress } from "viem";
import type { AppDeps } from "../core/deps.js";
import { withTransaction } from "../db/client.js";
import { transition } from "../modules/payments/state-machine.js";
import type { Processor } from "./runner.js";

/**
 * `pending -> expired` once `expiresAt` has passed and nothing at all was received: not even an
 * unconfirmed transfer or a native balance (those are processed whenever they confirm).
 */
export async function expirePayments(deps: AppDeps): Promise<number> {
  const now = deps.now();
  const { rows } = await deps.db.pool.query(
    `SELECT p.id, p.chain_id, p.token_address, p.recipient_address FROM payments p
      WHERE p.status = 'pending' AND p.expires_at < $1 AND p.received_units = 0
        AND NOT EXISTS (SELECT 1 FROM "${deps.db.viewsSchema}".transfer t WHERE t.chain_id = p.chain_id AND t."to" = lower(p.recipient_address))`,
    [new Date(now)],
  );
  let expired = 0;
  for (const r of rows) {
    if (r.token_address === zeroAddress) {
      const client = deps.clients.get(r.chain_id);
      if (!client || (await client.getBalance({ address: r.recipient_address })) > 0n) continue;
    }
    const done = await withTransaction(deps.db, (client) =>
      transition(client, r.id, { from: ["pending"], to: "expired", guard: (p) => BigInt(p.received_units) === 0n, reason: "expired with nothing received", event: { name: "payment.expired" }, now }),
    );
    if (done) expired++;
  }
  return expired;
}

/** Runs every minute (spec). */
export const expiry: Processor = { name: "expiry", intervalMs: 60_000, needsIndexer: true, run: (deps) => expirePayments(deps).then(() => {}) };
