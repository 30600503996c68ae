import { and, eq, sql } from "drizzle-orm";
import { sweepGasCap } from "../../chains/gas-caps.js";
import { zeroAddress, type Hex } from "viem";
import { encodeSweep } from "../../chains/factory-calls.js";
import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { GasEstimateError, type TxSender } from "../../chains/tx-sender.js";
import {
  fundRecoveries,
  payments,
  RECOVERY_TANK_SHORT,
  recoveryCharge,
  type RecoveryCharge,
  type PaymentRow,
  isBlocked,
  recoverableUnits,
  transitionRecovery,
} from "../payments/index.js";
import { debitRecoveryFee, gasTankBalance, refundRecoveryFee } from "../gas-tank/index.js";
import { PriceUnavailableError } from "../pricing/index.js";
import { withTransaction } from "../../db/client.js";
import { sanctionsBlockedFunds, admitRecoveries } from "../sanctions/index.js";
import type { SettlerHooks } from "./shared.js";

/**
 * Recoveries of unexpected funds (modules/payments/recover.ts queues them), one settler step per chain:
 * reconcile what was signed, mark recovered what the indexer saw swept, send what was requested.
 * Each is the factory's `deployAndSweep(salt, payout, token, 0, 0x0)`: it deploys the wallet if it has no code
 * yet and sweeps the whole balance of the token to the payout the address commits to, with no fee. The
 * contract can pay no one else, so a recovery can never send funds elsewhere.
 */
export async function settleRecoveries(deps: AppDeps, chain: ActiveChain, sender: TxSender, hooks: SettlerHooks = {}): Promise<void> {
  if (!chain.factory) return;
  // One cheap query per pass when nothing is in flight (the usual case).
  const { rows } = await deps.db.pool.query<{ status: string }>(
    `SELECT DISTINCT status FROM fund_recoveries WHERE chain_id = $1 AND status IN ('requested', 'signed', 'sent', 'mined')`,
    [chain.chainId],
  );
  const open = new Set(rows.map((r) => r.status));
  if (open.has("signed") || open.has("sent")) await reconcileRecoveries(deps, chain, sender);
  if (open.has("mined") || open.has("signed") || open.has("sent")) await completeRecoveries(deps, chain);
  if (open.has("requested")) await sendRecoveries(deps, chain, sender, hooks);
}

/** Signed or sent: mined -> `mined` (waits for the index); reverted -> `failed`; dropped -> `requested` again. */
async function reconcileRecoveries(deps: AppDeps, chain: ActiveChain, sender: TxSender) {
  const { rows } = await deps.db.pool.query(
    `SELECT id, status, tx_hash, raw_tx, nonce, signer FROM fund_recoveries WHERE chain_id = $1 AND status IN ('signed', 'sent') ORDER BY nonce`,
    [chain.chainId],
  );
  const txs = rows.map((r) => ({
    ...r,
    hash: r.tx_hash as Hex,
    rawTx: r.raw_tx as Hex,
    nonce: r.nonce as number,
    from: r.signer as string,
  }));
  await sender.reconcile(txs, async (r, outcome) => {
    const from = ["signed", "sent"] as const;
    const now = deps.now();
    await withTransaction(deps.db, async (client) => {
      if (outcome.status === "mined")
        await transitionRecovery(client, r.id, {
          from,
          to: "mined",
          reason: `mined in block ${outcome.receipt.blockNumber}`,
          set: { blockNumber: outcome.receipt.blockNumber.toString(), txHash: outcome.receipt.transactionHash },
          now,
        });
      // Its Gas Tank fee is kept: the settler spent the gas (a token can pass the estimate and revert when mined).
      else if (outcome.status === "reverted")
        await transitionRecovery(client, r.id, {
          from,
          to: "failed",
          reason: `reverted in block ${outcome.receipt.blockNumber}`,
          set: {
            blockNumber: outcome.receipt.blockNumber.toString(),
            txHash: outcome.receipt.transactionHash,
            error: `sweep transaction ${outcome.receipt.transactionHash} reverted`,
          },
          now,
        });
      // Its nonce went to another transaction, at a final depth: it can never mine, so the recovery is sent again.
      else if (outcome.status === "dropped")
        await transitionRecovery(client, r.id, {
          from,
          to: "requested",
          reason: `transaction ${r.hash} dropped: its nonce was used by another`,
          set: { signer: null, nonce: null, txHash: null, rawTx: null, error: `sweep transaction ${r.hash} dropped; sent again` },
          now,
        });
      else if (r.status === "signed")
        await transitionRecovery(client, r.id, { from: ["signed"], to: "sent", reason: "broadcast (reconciled)", now });
    });
  });
}

/** Mined -> `recovered` once the factory's Swept event of that transaction is indexed: the amount is the event's. */
async function completeRecoveries(deps: AppDeps, chain: ActiveChain) {
  const w = deps.db.views.sweep;
  const r = fundRecoveries;
  const rows = await deps.db.orm
    .select({ id: r.id, amount: w.amount })
    .from(r)
    .innerJoin(payments, eq(payments.id, r.paymentId))
    .innerJoin(
      w,
      and(
        eq(w.chainId, r.chainId),
        eq(w.transactionHash, sql`${r.txHash}`),
        eq(w.wallet, sql`lower(${payments.recipientAddress})`),
        eq(w.token, sql`${r.token}`),
      ),
    )
    .where(and(eq(r.chainId, chain.chainId), eq(r.status, "mined")));
  for (const x of rows)
    await withTransaction(deps.db, (client) =>
      transitionRecovery(client, x.id, {
        from: ["mined"],
        to: "recovered",
        reason: "Swept event indexed",
        set: { recoveredUnits: x.amount.toString() },
        now: deps.now(),
      }),
    );
}

/**
 * Requested -> signed: one sweep transaction each, stored before it is broadcast (chains/tx-sender.ts). The senders of
 * what each would move are screened first (modules/sanctions/recovery.ts): a flagged one holds the recovery
 * (`requested`, with `error`), an outage or an unidentified native sender leaves it waiting with a backoff (fail
 * closed). Recoveries of funds sanctions screening blocks (a held or rejected payment, a held or rejected recovery of
 * the token) are not signed: checked when read and again in the claim, under the payment's row lock.
 */
async function sendRecoveries(deps: AppDeps, chain: ActiveChain, sender: TxSender, hooks: SettlerHooks) {
  const r = fundRecoveries;
  const closed = deps.config.SANCTIONS_FAIL_MODE !== "open";
  const now = new Date(deps.now());
  const read = await deps.db.orm
    .select({
      id: r.id,
      paymentId: r.paymentId,
      token: r.token,
      salt: payments.salt,
      payout: payments.merchantAddress,
      address: payments.recipientAddress,
      createdAt: payments.createdAt,
    })
    .from(r)
    .innerJoin(payments, eq(payments.id, r.paymentId))
    .where(
      and(
        eq(r.chainId, chain.chainId),
        eq(r.status, "requested"),
        // A recovery whose screening could not finish waits out its backoff (modules/sanctions/waits.ts).
        closed
          ? sql`NOT EXISTS (SELECT 1 FROM sanctions_screenings w WHERE w.subject = 'recovery' AND w.subject_id = ${r.id} AND w.retry_at > ${now})`
          : undefined,
      ),
    )
    .orderBy(r.createdAt)
    .limit(20);
  const blocked = await sanctionsBlockedFunds(
    deps.db.pool,
    read.map((x) => x.paymentId),
  );
  const candidates = read.filter((x) => !isBlocked(blocked, x.paymentId, x.token));
  const admitted = await admitRecoveries(deps, chain, candidates);
  const rows = candidates.filter((x) => admitted.has(x.id));
  const feeRecipient = (deps.config.FEE_RECIPIENT ?? sender.address) as Hex;
  for (const x of rows) {
    // Charged as a payment of what is there now would be (modules/payments/recovery-fee.ts).
    const payment = (await deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [x.paymentId])).rows[0]!;
    const units = await recoverableUnits(deps, payment, x.token as Hex);
    let charge: RecoveryCharge;
    try {
      charge = await recoveryCharge(deps, payment, x.token, units);
    } catch (e) {
      // No price now: this one waits for the next pass, the others go on.
      if (!(e instanceof PriceUnavailableError)) throw e;
      continue;
    }
    const feeUnits = charge.kind === "inKind" ? charge.feeUnits : 0n;
    const micros = charge.kind === "gasTank" ? charge.micros : 0n;
    const refuse = async (error: string) =>
      withTransaction(deps.db, (client) =>
        transitionRecovery(client, x.id, { from: ["requested"], to: "failed", reason: error, set: { error }, now: deps.now() }),
      );
    if (units === 0n) {
      await refuse("nothing left to recover on the address");
      continue;
    }
    let tankShort = false;
    const data = encodeSweep([
      {
        salt: x.salt as Hex,
        payout: x.payout as Hex,
        token: x.token as Hex,
        fee: feeUnits,
        feeRecipient: feeUnits > 0n ? feeRecipient : zeroAddress,
      },
    ]);
    try {
      await sender.sendTransaction({
        to: chain.factory!,
        data,
        gasCap: sweepGasCap(1, deps.config.SWEEP_GAS_CAP_PER_WALLET),
        hooks,
        // Another replica may have signed it since we read it: the row lock waits for that one's commit. The payment's
        // row is locked first (as holdPayment and holdRecovery lock it), then no hold may block these funds.
        claim: async (client) => {
          await client.query(`SELECT 1 FROM payments WHERE id = $1 FOR UPDATE`, [x.paymentId]);
          const { rows: cur } = await client.query(`SELECT status FROM fund_recoveries WHERE id = $1 FOR UPDATE`, [x.id]);
          if (cur[0]?.status !== "requested") return false;
          if (isBlocked(await sanctionsBlockedFunds(client, [x.paymentId]), x.paymentId, x.token)) return false;
          if (micros === 0n) return true;
          // The merchant's row serialises its Gas Tank debits (as settlement's reserve step does).
          await client.query(`SELECT id FROM merchants WHERE id = $1 FOR NO KEY UPDATE`, [payment.merchant_id]);
          tankShort = (await gasTankBalance(client, payment.merchant_id)) < micros;
          return !tankShort;
        },
        record: async (client, tx) => {
          await transitionRecovery(client, x.id, {
            from: ["requested"],
            to: "signed",
            reason: `signed ${tx.hash}`,
            set: {
              signer: tx.from,
              nonce: tx.nonce,
              txHash: tx.hash,
              rawTx: tx.rawTx,
              feeUnits: feeUnits.toString(),
              gasTankFeeMicros: micros.toString(),
            },
            data: { txHash: tx.hash, nonce: tx.nonce, feeUnits: feeUnits.toString(), gasTankFeeMicros: micros.toString() },
            now: deps.now(),
          });
          if (micros > 0n) await debitRecoveryFee(client, { id: x.id, merchantId: payment.merchant_id, chainId: chain.chainId }, micros);
        },
        sent: async (tx) => {
          await withTransaction(deps.db, (client) =>
            transitionRecovery(client, x.id, { from: ["signed"], to: "sent", reason: `broadcast ${tx.hash}`, now: deps.now() }),
          );
        },
      });
      if (tankShort) await refuse(RECOVERY_TANK_SHORT);
    } catch (e) {
      // The sweep would revert (nothing left on the address, a token that refuses the transfer) or cost more gas than
      // a sweep may (a token that burns it: chains/gas-caps.ts): nothing was signed.
      // An RPC failure is not a GasEstimateError: it propagates and the next pass tries again.
      if (!(e instanceof GasEstimateError)) throw e;
      const error = `sweep cannot execute: ${e.message.split("\n")[0]}`;
      await withTransaction(deps.db, (client) =>
        transitionRecovery(client, x.id, { from: ["requested"], to: "failed", reason: error, set: { error }, now: deps.now() }),
      );
      // A fee debited for an earlier signing whose transaction was dropped (never mined): nothing was spent for it.
      await refundRecoveryFee(deps.db.pool, x.id);
    }
  }
}
