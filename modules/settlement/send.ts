import type { Address, Hex } from "viem";
import { encodeSweep } from "../../chains/factory-calls.js";
import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { GasEstimateError, type TxSender } from "../../chains/tx-sender.js";
import { withTransaction } from "../../db/client.js";
import { walletBalances } from "../payments/balances.js";
import { reopenAfterReorg } from "../payments/reorg.js";
import { transition } from "../payments/state-machine.js";
import type { PaymentRow } from "../payments/types.js";
import { batchSizeFor } from "./batch-size.js";
import { sweepFeeUnits } from "./plan.js";
import { COVERING, failPayments, type SettlerHooks } from "./shared.js";

/**
 * Step 2: one signed sweep transaction for the ready payments of the chain, oldest first (a batch when several, as
 * many as batch-size.ts allows): settlements and withdrawals of partial payments alike. The settlement row holds the
 * signed bytes before they are broadcast (chains/tx-sender.ts), so a payment is never swept twice.
 */
export async function send(deps: AppDeps, chain: ActiveChain, sender: TxSender, hooks: SettlerHooks): Promise<void> {
  const { rows: ready } = await deps.db.pool.query<PaymentRow>(
    `SELECT p.* FROM payments p
      WHERE p.chain_id = $1 AND p.status IN ('deploying_wallet', 'withdrawing')
        AND NOT EXISTS (SELECT 1 FROM settlements s WHERE p.id = ANY(s.payment_ids) AND s.status IN ${COVERING})
      ORDER BY p.paid_at NULLS LAST LIMIT $2`,
    [chain.chainId, deps.config.SETTLEMENT_MAX_BATCH],
  );
  // The block gas limit is read only when there is a batch to size (cached a minute).
  const rows = ready.length > 1 ? ready.slice(0, await batchSizeFor(deps, chain)) : ready;
  const funded = await fundedOnChain(deps, chain, rows);
  if (funded.length > 0) await sweepOrFail(deps, chain, sender, funded, hooks);
}

/**
 * The payments whose wallet holds, at the node's head, what detection counted (a withdrawal: anything).
 * Checked before signing, so a deposit a re-org took away is never swept short or into a revert.
 */
async function fundedOnChain(deps: AppDeps, chain: ActiveChain, rows: PaymentRow[]): Promise<PaymentRow[]> {
  const short = await reopenUnfunded(deps, chain, rows);
  return rows.filter((p) => !short.has(p.id));
}

/**
 * Of `rows` (deploying_wallet or withdrawing), those whose wallet no longer holds what was counted go back
 * to `pending`: a settlement through reorg.ts (Gas Tank fee refunded, `payment.reorged`), a withdrawal with
 * nothing left quietly. Returns the ids moved.
 */
export async function reopenUnfunded(deps: AppDeps, chain: ActiveChain, rows: PaymentRow[]): Promise<Set<string>> {
  const moved = new Set<string>();
  if (!rows.length) return moved;
  const balances = await walletBalances(
    deps,
    chain,
    rows.map((p) => ({ address: p.recipient_address as Address, token: p.token_address as Address })),
  );
  for (const [i, p] of rows.entries()) {
    const balance = balances[i]!;
    const short = p.status === "withdrawing" ? balance === 0n : balance < BigInt(p.received_units);
    if (!short) continue;
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      // Another replica may have signed a sweep since we read the balance (the wallet is empty because it was
      // swept): the payment row is locked first, as the signer's claim does, then checked.
      await client.query(`SELECT 1 FROM payments WHERE id = $1 FOR UPDATE`, [p.id]);
      const covered = await client.query(
        `SELECT 1 FROM settlements WHERE payment_ids @> ARRAY[$1]::uuid[] AND status IN ${COVERING} LIMIT 1`,
        [p.id],
      );
      if (covered.rowCount) return;
      const done =
        p.status === "withdrawing"
          ? await transition(client, p.id, {
              from: ["withdrawing"],
              to: "pending",
              reason: "reorg: nothing left to withdraw",
              set: { received_units: "0", payment_tx_hash: null, payment_block_number: null, received_block_number: null },
              now,
            })
          : await reopenAfterReorg(client, p.id, {
              from: ["deploying_wallet"],
              received: balance,
              receivedBlock: p.received_block_number ?? p.payment_block_number,
              txHash: p.payment_tx_hash,
              reason: "the wallet holds less than the counted deposit",
              now,
            });
      if (done) moved.add(p.id);
    });
  }
  return moved;
}
/** A batch fails as a whole: then each payment is swept alone, and only one that cannot be swept fails. */
async function sweepOrFail(deps: AppDeps, chain: ActiveChain, sender: TxSender, rows: PaymentRow[], hooks: SettlerHooks): Promise<void> {
  try {
    await sweep(deps, chain, sender, rows, hooks);
  } catch (e) {
    if (!(e instanceof GasEstimateError)) throw e;
    if (rows.length === 1) await failPayments(deps, rows, `sweep cannot execute: ${e.message.split("\n")[0]}`);
    else for (const p of rows) await sweepOrFail(deps, chain, sender, [p], hooks);
  }
}

async function sweep(deps: AppDeps, chain: ActiveChain, sender: TxSender, rows: PaymentRow[], hooks: SettlerHooks): Promise<void> {
  const feeRecipient = (deps.config.FEE_RECIPIENT ?? sender.address) as Hex;
  const requests = rows.map((p) => ({
    salt: p.salt as Hex,
    payout: p.merchant_address as Hex,
    token: p.token_address as Hex,
    fee: sweepFeeUnits(p),
    feeRecipient,
  }));
  const data = encodeSweep(requests);
  const paymentIds = rows.map((p) => p.id);
  await sender.sendTransaction({
    to: chain.factory!,
    data,
    hooks,
    // Another replica may have signed for these payments since we read them, or sent one back to pending
    // (reopenUnfunded): the rows are locked, then every one must still be waiting for this sweep.
    claim: async (client) => {
      const ready = await client.query(
        `SELECT id FROM payments WHERE id = ANY($1::uuid[]) AND status IN ('deploying_wallet', 'withdrawing') ORDER BY id FOR UPDATE`,
        [paymentIds],
      );
      if (ready.rowCount !== paymentIds.length) return false;
      const taken = await client.query(`SELECT 1 FROM settlements WHERE payment_ids && $1::uuid[] AND status IN ${COVERING} LIMIT 1`, [
        paymentIds,
      ]);
      return !taken.rowCount;
    },
    record: async (client, tx) => {
      await client.query(
        `INSERT INTO settlements (chain_id, signer, nonce, tx_hash, raw_tx, payment_ids, status) VALUES ($1, $2, $3, $4, $5, $6, 'signed')`,
        [tx.chainId, tx.from, tx.nonce, tx.hash, tx.rawTx, paymentIds],
      );
    },
    sent: async (tx) => {
      const sql = `UPDATE settlements SET status = 'sent', updated_at = now() WHERE tx_hash = $1 AND status = 'signed'`;
      await deps.db.pool.query(sql, [tx.hash]);
    },
  });
}
