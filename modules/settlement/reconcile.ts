import type { AppDeps } from "../../core/deps.js";
import { observeSettlement } from "../../core/metrics.js";
import type { ActiveChain } from "../../chains/runtime.js";
import type { TxSender } from "../../chains/tx-sender.js";
import type { PaymentRow } from "../payments/index.js";
import { reopenUnfunded } from "./send.js";
import { failPayments, LIVE } from "./shared.js";
import { transitionSettlement } from "./transition.js";
import { withTransaction } from "../../db/client.js";
import { l1FeeOf } from "./gas-true-up.js";

/**
 * Step 0: reconcile transactions already signed (chains/tx-sender.ts). Mined -> record the receipt;
 * reverted -> the payments fail (Gas Tank fee refunded); not known to the node -> re-broadcast the same
 * bytes, unless the nonce was used by another transaction at a final depth (then it can never mine: dropped,
 * and its payments are swept again). An RPC error leaves the row for the next pass. A mined sweep whose block a
 * re-org took away is treated as sent again.
 */
export async function reconcile(deps: AppDeps, chain: ActiveChain, sender: TxSender) {
  // A mined sweep whose nonce the chain no longer counts was re-orged away (completed or not): it is looked at
  // again and, its receipt gone, the same bytes are sent again, filling the nonce the sender has moved past.
  const counted = await deps.clients.get(chain.chainId)!.getTransactionCount({ address: sender.address, blockTag: "latest" });
  const { rows } = await deps.db.pool.query(
    `SELECT * FROM settlements WHERE chain_id = $1 AND (status IN ${LIVE} OR (status = 'mined' AND signer = $2 AND nonce >= $3))
      ORDER BY nonce`,
    [chain.chainId, sender.address.toLowerCase(), counted],
  );
  // Every signer's: a settler key rotated away leaves its transactions to be followed to the end (sender.reconcile).
  const txs = rows.map((s) => ({ ...s, hash: s.tx_hash, rawTx: s.raw_tx, from: s.signer }));
  await sender.reconcile(txs, async (s, outcome) => {
    if (outcome.status === "mined" || outcome.status === "reverted") {
      const { receipt } = outcome;
      await withTransaction(deps.db, (client) =>
        transitionSettlement(client, s.id, {
          from: ["signed", "sent", "mined"],
          to: outcome.status,
          reason: `${outcome.status} in block ${receipt.blockNumber}`,
          set: {
            gasUsed: receipt.gasUsed.toString(),
            effectiveGasPrice: receipt.effectiveGasPrice.toString(),
            l1Fee: l1FeeOf(receipt)?.toString() ?? null,
            blockNumber: receipt.blockNumber.toString(),
            // The version that mined (a stuck one may have been replaced with higher fees: chains/tx-sender.ts).
            txHash: receipt.transactionHash,
          },
          now: deps.now(),
        }),
      );
      observeSettlement(chain.chainId, outcome.status, receipt.gasUsed, s.payment_ids.length);
      if (outcome.status === "reverted") {
        const { rows: ps } = await deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = ANY($1)`, [s.payment_ids]);
        // A batch reverts as a whole when a re-org emptied one of its wallets: that payment waits for its funds
        // again, the others (no longer covered by this settlement) are signed again by the next pass.
        const short = await reopenUnfunded(deps, chain, ps);
        if (short.size === 0) await failPayments(deps, ps, `sweep transaction ${s.tx_hash} reverted`);
      }
    } else if (outcome.status === "dropped")
      await withTransaction(deps.db, (client) =>
        transitionSettlement(client, s.id, {
          from: ["signed", "sent", "mined"],
          to: "dropped",
          reason: `transaction ${s.tx_hash} dropped: its nonce was used by another`,
          now: deps.now(),
        }),
      );
    else if (s.status !== "sent")
      // signed and now accepted by the node; or mined, then re-orged out and sent again
      await withTransaction(deps.db, (client) =>
        transitionSettlement(client, s.id, {
          from: ["signed", "mined"],
          to: "sent",
          reason: s.status === "mined" ? "re-orged out: the same bytes sent again" : "broadcast (reconciled)",
          now: deps.now(),
        }),
      );
  });
}
