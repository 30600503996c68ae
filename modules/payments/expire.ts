import { and, eq, lt, notExists, sql } from "drizzle-orm";
import type { AppDeps } from "../../core/deps.js";
import { withTransaction } from "../../db/client.js";
import { bridgeOrders, bridgeOrderInFlight, orderInFlight } from "../bridge/index.js";
import { payments } from "./schema.js";
import { addressHasFunds } from "./address-has-funds.js";
import { transition } from "./state-machine.js";

/**
 * `pending -> expired` once `expiresAt` has passed and nothing at all has reached the address: not even an
 * unconfirmed transfer or a native balance (address-has-funds.ts, the rule cancel uses too; those are processed
 * whenever they confirm), and no cross-chain order in flight (spec: the payment stays open while a swap is being
 * filled; modules/bridge/guard.ts). Both are checked again under the payment's lock.
 * Only `pending`: a payment in `waiting_for_confirmation` (its full amount seen, not yet deep enough) is never
 * expired; if a re-org takes its deposit away it returns to `pending` (detect.ts) and expires from there.
 */
export async function expirePayments(deps: AppDeps): Promise<number> {
  const now = deps.now();
  const t = deps.db.views.transfer;
  // The indexed half of addressHasFunds as a filter: payments with a transfer are not read one by one every pass.
  const anyTransfer = deps.db.orm
    .select({ one: sql`1` })
    .from(t)
    .where(and(eq(t.chainId, payments.chainId), eq(t.to, sql`lower(${payments.recipientAddress})`)));
  const bridging = deps.db.orm
    .select({ one: sql`1` })
    .from(bridgeOrders)
    .where(and(eq(bridgeOrders.paymentId, payments.id), orderInFlight()));
  const rows = await deps.db.orm
    .select({
      id: payments.id,
      chain_id: payments.chainId,
      token_address: payments.tokenAddress,
      recipient_address: payments.recipientAddress,
    })
    .from(payments)
    .where(
      and(
        eq(payments.status, "pending"),
        lt(payments.expiresAt, new Date(now)),
        sql`${payments.receivedUnits} = 0`,
        notExists(anyTransfer),
        notExists(bridging),
      ),
    );
  let expired = 0;
  for (const r of rows) {
    const done = await withTransaction(deps.db, async (client) => {
      // Under the payment's lock, as orders are recorded (modules/bridge/orders.ts) and deposits counted (detect.ts):
      // a swap reported since the read above has moved expiresAt or holds the payment; a transfer indexed since then,
      // or a native balance (read here), keeps it open.
      await client.query(`SELECT 1 FROM payments WHERE id = $1 FOR UPDATE`, [r.id]);
      if (await bridgeOrderInFlight(client, r.id)) return null;
      if (await addressHasFunds(deps, client, r)) return null;
      return transition(client, r.id, {
        from: ["pending"],
        to: "expired",
        guard: (p) => BigInt(p.received_units) === 0n && p.expires_at.getTime() < now,
        reason: "expired with nothing received",
        event: { name: "payment.expired" },
        now,
      });
    });
    if (done) expired++;
  }
  return expired;
}
