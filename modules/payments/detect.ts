import { and, eq, inArray, lte, ne, sql } from "drizzle-orm";
import { zeroAddress, type Address } from "viem";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { withTransaction } from "../../db/client.js";
import { payments } from "../../db/schema.js";
import { transition } from "./state-machine.js";

type Seen = { id: string; status: string; due: bigint; previous: bigint; received: bigint; txHash: string | null; block: string | null };

const OPEN = ["pending", "expired"];
/** What detection needs of an open payment. */
const OPEN_COLUMNS = { id: payments.id, status: payments.status, dueUnits: payments.dueUnits, receivedUnits: payments.receivedUnits };

/** Token payments whose confirmed transfers (at least `block_confirmations` below `latest`) sum to something new. */
async function confirmedTokenDeposits(deps: AppDeps, chain: ActiveChain, latest: bigint): Promise<Seen[]> {
  const t = deps.db.views.transfer;
  const received = sql<string>`sum(${t.amount})`;
  const rows = await deps.db.orm
    .select({
      ...OPEN_COLUMNS,
      received,
      txHash: sql<string>`(array_agg(${t.transactionHash} ORDER BY ${t.blockNumber}, ${t.logIndex}))[1]`,
      block: sql<string>`min(${t.blockNumber})`,
    })
    .from(payments)
    .innerJoin(
      t,
      and(
        eq(t.chainId, payments.chainId),
        eq(t.to, sql`lower(${payments.recipientAddress})`),
        eq(t.token, sql`lower(${payments.tokenAddress})`),
        lte(t.blockNumber, sql`${latest.toString()}::numeric - ${payments.blockConfirmations} + 1`),
      ),
    )
    .where(and(eq(payments.chainId, chain.chainId), inArray(payments.status, OPEN), ne(payments.tokenAddress, zeroAddress)))
    .groupBy(payments.id)
    .having(sql`${received} <> ${payments.receivedUnits}`);
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    due: BigInt(r.dueUnits),
    previous: BigInt(r.receivedUnits),
    received: BigInt(r.received),
    txHash: r.txHash,
    block: r.block,
  }));
}

/** Native-coin payments emit no log: their address's balance at the confirmed block, where it changed. */
async function confirmedNativeDeposits(deps: AppDeps, chain: ActiveChain, latest: bigint): Promise<Seen[]> {
  const rows = await deps.db.orm
    .select({
      ...OPEN_COLUMNS,
      recipientAddress: payments.recipientAddress,
      blockConfirmations: payments.blockConfirmations,
    })
    .from(payments)
    .where(and(eq(payments.chainId, chain.chainId), inArray(payments.status, OPEN), eq(payments.tokenAddress, zeroAddress)));
  const client = deps.clients.get(chain.chainId)!;
  const seen: Seen[] = [];
  for (const r of rows) {
    const at = latest - BigInt(r.blockConfirmations) + 1n;
    if (at < 0n) continue;
    const balance = await client.getBalance({ address: r.recipientAddress as Address, blockNumber: at });
    if (balance !== BigInt(r.receivedUnits))
      seen.push({
        id: r.id,
        status: r.status,
        due: BigInt(r.dueUnits),
        previous: BigInt(r.receivedUnits),
        received: balance,
        txHash: null,
        block: at.toString(),
      });
  }
  return seen;
}

/**
 * Sums confirmed transfers to each open payment's address (at least `blockConfirmations` deep)
 * and moves `pending -> paid` once the due amount is reached; partial amounts are recorded and
 * the payment stays pending. Expired payments are scanned too: late funds are never dropped.
 * Native-coin payments emit no log, so they are watched by balance at the confirmed block.
 */
export async function detectPayments(deps: AppDeps, chain: ActiveChain, latest: bigint): Promise<number> {
  const seen = await confirmedTokenDeposits(deps, chain, latest);
  if (chain.native) seen.push(...(await confirmedNativeDeposits(deps, chain, latest)));

  let changed = 0;
  for (const s of seen) {
    if (s.received < s.previous) continue; // a re-org took a deposit away; keep the higher record until it reappears
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      const common = { received_units: s.received.toString(), payment_tx_hash: s.txHash, payment_block_number: s.block };
      if (s.received >= s.due) {
        const done = await transition(client, s.id, {
          from: ["pending", "expired"],
          to: "paid",
          reason: "payment received in full",
          set: { ...common, overpayment_units: (s.received - s.due).toString(), paid_at: new Date(now) },
          now,
        });
        if (done) changed++;
      } else {
        if (s.status === "expired")
          await transition(client, s.id, { from: ["expired"], to: "pending", reason: "funds received after expiry", set: common, now });
        else
          await client.query(
            `UPDATE payments SET received_units = $2, payment_tx_hash = $3, payment_block_number = $4, updated_at = now() WHERE id = $1 AND status = 'pending'`,
            [s.id, common.received_units, s.txHash, s.block],
          );
        changed++;
      }
    });
  }
  return changed;
}
