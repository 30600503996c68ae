import { zeroAddress } from "viem";
import type { AppDeps } from "../core/deps.js";
import type { ActiveChain } from "../chains/runtime.js";
import { withTransaction } from "../db/client.js";
import { transition } from "../modules/payments/state-machine.js";
import { indexerProgress } from "../db/indexer-status.js";
import type { Processor } from "./runner.js";

type Seen = { id: string; status: string; due: bigint; previous: bigint; received: bigint; txHash: string | null; block: string | null };

/**
 * Sums confirmed transfers to each open payment's address (at least `blockConfirmations` deep)
 * and moves `pending -> paid` once the due amount is reached; partial amounts are recorded and
 * the payment stays pending. Expired payments are scanned too: late funds are never dropped.
 * Native-coin payments emit no log, so they are watched by balance at the confirmed block.
 */
export async function detectPayments(deps: AppDeps, chain: ActiveChain, latest: bigint): Promise<number> {
  const v = deps.db.viewsSchema;
  const { rows } = await deps.db.pool.query(
    `SELECT p.id, p.status, p.due_units, p.received_units, agg.received, agg.tx_hash, agg.block
       FROM payments p
       JOIN LATERAL (
         SELECT sum(t.amount) AS received,
                (array_agg(t.transaction_hash ORDER BY t.block_number, t.log_index))[1] AS tx_hash,
                min(t.block_number) AS block
           FROM "${v}".transfer t
          WHERE t.chain_id = p.chain_id AND t."to" = lower(p.recipient_address) AND t.token = lower(p.token_address)
            AND t.block_number <= $2::numeric - p.block_confirmations + 1
       ) agg ON agg.received IS NOT NULL
      WHERE p.chain_id = $1 AND p.status IN ('pending', 'expired') AND p.token_address <> $3
        AND agg.received <> p.received_units`,
    [chain.chainId, latest.toString(), zeroAddress],
  );
  const seen: Seen[] = rows.map((r) => ({
    id: r.id, status: r.status, due: BigInt(r.due_units), previous: BigInt(r.received_units), received: BigInt(r.received), txHash: r.tx_hash, block: r.block,
  }));

  if (chain.native) {
    const { rows: natives } = await deps.db.pool.query(
      `SELECT id, status, due_units, received_units, recipient_address, block_confirmations FROM payments
        WHERE chain_id = $1 AND status IN ('pending', 'expired') AND token_address = $2`,
      [chain.chainId, zeroAddress],
    );
    const client = deps.clients.get(chain.chainId)!;
    for (const r of natives) {
      const at = latest - BigInt(r.block_confirmations) + 1n;
      if (at < 0n) continue;
      const balance = await client.getBalance({ address: r.recipient_address, blockNumber: at });
      if (balance !== BigInt(r.received_units))
        seen.push({ id: r.id, status: r.status, due: BigInt(r.due_units), previous: BigInt(r.received_units), received: balance, txHash: null, block: at.toString() });
    }
  }

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
        if (s.status === "expired") await transition(client, s.id, { from: ["expired"], to: "pending", reason: "funds received after expiry", set: common, now });
        else await client.query(`UPDATE payments SET received_units = $2, payment_tx_hash = $3, payment_block_number = $4, updated_at = now() WHERE id = $1 AND status = 'pending'`, [s.id, common.received_units, s.txHash, s.block]);
        changed++;
      }
    });
  }
  return changed;
}

/**
 * Confirmations are counted against the block Ponder has indexed (its checkpoint), not the node's
 * head: a transfer can only be summed once it is indexed anyway, and this makes a pass cost one
 * query and no RPC call. A chain is scanned again only when its indexed block moved, so the
 * detector can poll often (DETECTOR_INTERVAL_MS, default 200) and notice a payment within a
 * fraction of a block. Before Ponder publishes its checkpoints the node's head is used.
 */
export function createDetector(intervalMs = Number(process.env.DETECTOR_INTERVAL_MS ?? 200)): Processor {
  const lastScanned = new Map<number, bigint>();
  return {
    name: "detector",
    needsIndexer: true,
    intervalMs,
    async run(deps) {
      const progress = await indexerProgress(deps.db);
      for (const chain of deps.chains) {
        const indexed = progress?.find((p) => p.chainId === chain.chainId)?.indexedBlock;
        const latest = indexed ? BigInt(indexed) : await deps.clients.get(chain.chainId)!.getBlockNumber({ cacheTime: 0 });
        if (lastScanned.get(chain.chainId) === latest) continue;
        await detectPayments(deps, chain, latest);
        lastScanned.set(chain.chainId, latest);
      }
    },
  };
}
