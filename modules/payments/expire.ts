import { and, eq, lt, notExists, sql } from "drizzle-orm";
import { zeroAddress, type Address } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { withTransaction } from "../../db/client.js";
import { payments } from "../../db/schema.js";
import { transition } from "./state-machine.js";

/**
 * `pending -> expired` once `expiresAt` has passed and nothing at all was received: not even an
 * unconfirmed transfer or a native balance (those are processed whenever they confirm).
 */
export async function expirePayments(deps: AppDeps): Promise<number> {
  const now = deps.now();
  const t = deps.db.views.transfer;
  const anyTransfer = deps.db.orm
    .select({ one: sql`1` })
    .from(t)
    .where(and(eq(t.chainId, payments.chainId), eq(t.to, sql`lower(${payments.recipientAddress})`)));
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
      ),
    );
  let expired = 0;
  for (const r of rows) {
    if (r.tokenAddress === zeroAddress) {
      const client = deps.clients.get(r.chainId);
      if (!client || (await client.getBalance({ address: r.recipientAddress as Address })) > 0n) continue;
    }
    const done = await withTransaction(deps.db, (client) =>
      transition(client, r.id, {
        from: ["pending"],
        to: "expired",
        guard: (p) => BigInt(p.received_units) === 0n,
        reason: "expired with nothing received",
        event: { name: "payment.expired" },
        now,
      }),
    );
    if (done) expired++;
  }
  return expired;
}
