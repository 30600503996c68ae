import type { Address, Hex } from "viem";
import { sweepGasCap } from "../../chains/gas-caps.js";
import { encodeSweep } from "../../chains/factory-calls.js";
import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { GasEstimateError, type TxSender } from "../../chains/tx-sender.js";
import { withTransaction } from "../../db/client.js";
import { transitionSettlement } from "./transition.js";
import { walletBalances } from "../payments/index.js";
import { reopenAfterReorg } from "../payments/index.js";
import { transition } from "../payments/index.js";
import { admitForSettlement } from "../sanctions/index.js";
import { notBackingOff } from "../sanctions/index.js";
import type { PaymentRow } from "../payments/index.js";
import { batchSizeFor } from "./batch-size.js";
import { sweepFeeUnits } from "./plan.js";
import { COVERING, failPayments, type SettlerHooks } from "./shared.js";

/**
 * What a sweep takes: settlements reserved (`deploying_wallet`), withdraw requests not taken yet (`withdraw_request`),
 * and withdrawals whose sweep must be signed again (`withdrawing` with no covering settlement: a dropped one).
 */
const SWEEPABLE = `('deploying_wallet', 'withdraw_request', 'withdrawing')`;

/**
 * Step 2: one signed sweep transaction for the ready payments of the chain, oldest first (a batch when several, as
 * many as batch-size.ts allows): settlements and withdrawals of partial payments alike. The settlement row holds the
 * signed bytes before they are broadcast (chains/tx-sender.ts), so a payment is never swept twice. A merchant's
 * withdraw request (`withdraw_request`, modules/payments/withdraw.ts) becomes `withdrawing` in the transaction that
 * stores the signed sweep: until then it waits here, whatever made the settler miss it (stopped, chain down).
 * Every payment is screened again just before its sweep is signed (screenedBeforeSigning): a payment whose screening
 * could not finish waits out its backoff (modules/sanctions/waits.ts) outside the batch.
 */
export async function send(deps: AppDeps, chain: ActiveChain, sender: TxSender, hooks: SettlerHooks): Promise<void> {
  const closed = deps.config.SANCTIONS_FAIL_MODE !== "open";
  const { rows: ready } = await deps.db.pool.query<PaymentRow>(
    `SELECT p.* FROM payments p
      WHERE p.chain_id = $1 AND p.status IN ${SWEEPABLE}
        AND NOT EXISTS (SELECT 1 FROM settlements s WHERE p.id = ANY(s.payment_ids) AND s.status IN ${COVERING})
        ${closed ? `AND ${notBackingOff("payment", "p.id", "$3")}` : ""}
      ORDER BY p.paid_at NULLS LAST LIMIT $2`,
    closed ? [chain.chainId, deps.config.SETTLEMENT_MAX_BATCH, new Date(deps.now())] : [chain.chainId, deps.config.SETTLEMENT_MAX_BATCH],
  );
  // The block gas limit is read only when there is a batch to size (cached a minute).
  const rows = ready.length > 1 ? ready.slice(0, await batchSizeFor(deps, chain)) : ready;
  const funded = await fundedOnChain(deps, chain, rows);
  const cleared = await screenedBeforeSigning(deps, chain, funded);
  if (cleared.length > 0) await sweepOrFail(deps, chain, sender, cleared, hooks);
}

/**
 * Sanctions screening of the payments about to be swept (modules/sanctions/admit.ts), right before signing: a
 * `deploying_wallet` payment (screened at `paid`, but it may have waited since, in `awaiting_gas` or with the chain
 * down, and the sweep moves whatever has arrived meanwhile) and a `withdraw_request`. Oracle answers are cached
 * (SANCTIONS_CACHE_TTL_MS) and native searches resume where they stopped, so this costs little. A flagged sender holds
 * the payment (`-> sanctioned`; a `deploying_wallet` payment's Gas Tank fee is refunded); one whose screening could not
 * finish waits (fail closed) unless SANCTIONS_FAIL_MODE=open. `withdrawing` rows (a dropped sweep signed again) pass
 * as they are: they were screened when they were taken.
 */
async function screenedBeforeSigning(deps: AppDeps, chain: ActiveChain, rows: PaymentRow[]): Promise<PaymentRow[]> {
  const screened = rows.filter((p) => p.status === "withdraw_request" || p.status === "deploying_wallet");
  if (!screened.length) return rows;
  const admitted = await admitForSettlement(deps, chain, screened);
  return rows.filter((p) => p.status === "withdrawing" || admitted.has(p.id));
}

/**
 * The payments whose wallet holds, at the node's head, what detection counted (a withdrawal: anything).
 * Checked before signing, so a deposit a re-org took away is never swept short or into a revert.
 */
async function fundedOnChain(deps: AppDeps, chain: ActiveChain, rows: PaymentRow[]): Promise<PaymentRow[]> {
  const short = await reopenUnfunded(deps, chain, rows);
  return rows.filter((p) => !short.has(p.id));
}

/** A merchant's withdrawal of a partial payment, requested or taken: swept with no fee, whatever is on the wallet. */
const isWithdrawal = (p: Pick<PaymentRow, "status">) => p.status === "withdraw_request" || p.status === "withdrawing";

/**
 * Of `rows` (deploying_wallet, withdraw_request or withdrawing), those whose wallet no longer holds what was counted
 * go back to `pending`: a settlement through reorg.ts (Gas Tank fee refunded, `payment.reorged`), a withdrawal with
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
    const short = isWithdrawal(p) ? balance === 0n : balance < BigInt(p.received_units);
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
      const done = isWithdrawal(p)
        ? await transition(client, p.id, {
            from: [p.status as "withdraw_request" | "withdrawing"],
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
  let settlementId = ""; // set by `record`, read by `sent`
  await sender.sendTransaction({
    to: chain.factory!,
    data,
    gasCap: sweepGasCap(rows.length, deps.config.SWEEP_GAS_CAP_PER_WALLET),
    hooks,
    // Another replica may have signed for these payments since we read them, or sent one back to pending
    // (reopenUnfunded), or another step moved one on: the rows are locked, then every one must still be in the
    // status it was read in (its fee above depends on it) and waiting for this sweep.
    claim: async (client) => {
      const { rows: locked } = await client.query<{ id: string; status: string }>(
        `SELECT id, status FROM payments WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
        [paymentIds],
      );
      if (locked.length !== rows.length || !rows.every((p) => locked.some((l) => l.id === p.id && l.status === p.status))) return false;
      const taken = await client.query(`SELECT 1 FROM settlements WHERE payment_ids && $1::uuid[] AND status IN ${COVERING} LIMIT 1`, [
        paymentIds,
      ]);
      return !taken.rowCount;
    },
    // The signed bytes and the withdraw requests this sweep takes, in one transaction: a request is `withdrawing`
    // exactly when a stored sweep covers it.
    record: async (client, tx) => {
      const { rows: stored } = await client.query<{ id: string }>(
        `INSERT INTO settlements (chain_id, signer, nonce, tx_hash, raw_tx, payment_ids, status) VALUES ($1, $2, $3, $4, $5, $6, 'signed') RETURNING id`,
        [tx.chainId, tx.from, tx.nonce, tx.hash, tx.rawTx, paymentIds],
      );
      settlementId = stored[0]!.id;
      for (const p of rows.filter((r) => r.status === "withdraw_request")) {
        const taken = await transition(client, p.id, {
          from: ["withdraw_request"],
          to: "withdrawing",
          reason: `withdrawal sweep signed: ${tx.hash}`,
          now: deps.now(),
        });
        if (!taken) throw new Error(`withdraw request ${p.id} changed under its lock`);
      }
    },
    // Called after `record` committed, in the same sendTransaction.
    sent: async (tx) => {
      await withTransaction(deps.db, (client) =>
        transitionSettlement(client, settlementId, { from: ["signed"], to: "sent", reason: `broadcast ${tx.hash}`, now: deps.now() }),
      );
    },
  });
}
