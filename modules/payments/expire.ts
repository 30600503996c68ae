import { and, eq, lt, notExists, sql } from "drizzle-orm";
import { zeroAddress, type Address } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { withTransaction } from "../../db/client.js";
import { bridgeOrders, payments } from "../../db/schema.js";
import { bridgeOrderInFlight } from "../bridge/guard.js";
import { IN_FLIGHT_SQL } from "../bridge/transition.js";
import { transition } from "./state-machine.js";

/**
 * `pending -> expired` once `expiresAt` has passed and nothing at all was received: not even an
 * unconfirmed transfer or a native balance (those are processed whenever they confirm), and no cross-chain order
 * in flight (spec: the payment stays open while a swap is being filled; modules/bridge/guard.ts).
 */
export async function expirePayments(deps: AppDeps): Promise<number> {
  const now = deps.now();
  const t = deps.db.views.transfer;
  const anyTransfer = deps.db.orm
    .select({ one: sql`1` })
    .from(t)
    .where(and(eq(t.chainId, payments.chainId), eq(t.to, sql`lower(${payments.recipientAddress})`)));
  const bridging = deps.db.orm
    .select({ one: sql`1` })
    .from(bridgeOrders)
    .where(and(eq(bridgeOrders.paymentId, payments.id), sql.raw(IN_FLIGHT_SQL)));
  const rows = await deps.db.orm
    .select({
      id: payments.id,
      chainId: payments.chainId,
      tokenAddress: payments.tokenAddress,
      recipientAddress: payments.recipientAddress,
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
    if (r.tokenAddress === zeroAddress) {
      const client = deps.clients.get(r.chainId);
      if (!client || (await client.getBalance({ address: r.recipientAddress as Address })) > 0n) continue;
    }
    const done = await withTransaction(deps.db, async (client) => {
      // Under the payment's lock, as orders are recorded (modules/bridge/orders.ts): a swap reported since the
      // read above has moved expiresAt or holds the payment.
      await client.query(`SELECT 1 FROM payments WHERE id = $1 FOR UPDATE`, [r.id]);
      if (await bridgeOrderInFlight(client, r.id)) return null;
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
