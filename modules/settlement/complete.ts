import { and, eq, inArray, lte, sql } from "drizzle-orm";
import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { withTransaction } from "../../db/client.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { payments, transition, type PaymentRow, feesOf } from "../payments/index.js";
import { settlements } from "./schema.js";
import { chargeSettlementGas, settlementFeeCharged, usdt } from "../gas-tank/index.js";
import { accrueAgentEarnings } from "../agents/index.js";
import { resolveNativePriceUsd } from "../pricing/index.js";
import { firstLine, logger } from "../../core/log.js";
import { gasTrueUpMicros } from "./gas-true-up.js";
import { usesGasTank } from "./plan.js";

const log = logger("settlement");

/**
 * Step 3: deploying_wallet -> completed (withdrawing -> withdrawn) once the Swept event of our mined
 * transaction is indexed and as deep as the payment's `blockConfirmations` (a sweep a re-org takes away
 * before that is sent again: reconcile.ts). The amounts come from the indexed event, not our own arithmetic.
 * A `withdraw_request` has no sweep of ours yet: send.ts makes it `withdrawing` when it stores one. A Gas Tank
 * payment's gas is charged again at what the mined sweep cost, in the same transaction (gas-true-up.ts).
 */
export async function complete(deps: AppDeps, chain: ActiveChain) {
  const progress = (await indexerProgress(deps.db))?.find((x) => x.chainId === chain.chainId);
  if (!progress) return;
  const latest = String(progress.indexedBlock);
  const w = deps.db.views.sweep;
  const rows = await deps.db.orm
    .select({
      id: payments.id,
      status: payments.status,
      txHash: settlements.txHash,
      gasUsed: settlements.gasUsed,
      effectiveGasPrice: settlements.effectiveGasPrice,
      l1Fee: settlements.l1Fee,
      batch: sql<number>`cardinality(${settlements.paymentIds})`,
      amount: w.amount,
    })
    .from(payments)
    .innerJoin(settlements, and(sql`${payments.id} = ANY(${settlements.paymentIds})`, eq(settlements.status, "mined")))
    .innerJoin(
      w,
      and(
        eq(w.chainId, payments.chainId),
        eq(w.wallet, sql`lower(${payments.recipientAddress})`),
        eq(w.transactionHash, settlements.txHash),
        lte(w.blockNumber, sql`${latest}::numeric - ${payments.blockConfirmations} + 1`),
      ),
    )
    .where(and(eq(payments.chainId, chain.chainId), inArray(payments.status, ["deploying_wallet", "withdrawing"])));
  const merchantTypes = new Map<string, string>();
  // The native coin's price for the Gas Tank's charge of mined gas (gas-true-up.ts), once a pass; without one the quote stands.
  let native: Promise<bigint | null> | undefined;
  const nativePrice = () =>
    (native ??= resolveNativePriceUsd(deps, chain.chainId, undefined, { cached: true }).then(
      (p) => p?.priceUsd18 ?? null,
      (e: unknown) => {
        log.warn({ chainId: chain.chainId, error: firstLine(e) }, "no native price: Gas Tank gas charged as quoted");
        return null;
      },
    ));
  for (const r of rows) {
    const price = r.status === "deploying_wallet" ? await nativePrice() : null;
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      if (r.status === "withdrawing") {
        await transition(client, r.id, {
          from: ["withdrawing"],
          to: "withdrawn",
          reason: "partial payment withdrawn",
          set: { withdrawn_units: r.amount.toString(), withdrawal_tx_hash: r.txHash },
          now,
          event: { name: "payment.withdrawn" },
        });
        return;
      }
      const p0 = (await client.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1 FOR UPDATE`, [r.id])).rows[0]!;
      if (p0.status !== "deploying_wallet") return;
      let type = merchantTypes.get(p0.merchant_id);
      if (!type) {
        type = (await client.query(`SELECT merchant_type FROM merchants WHERE id = $1`, [p0.merchant_id])).rows[0].merchant_type as string;
        merchantTypes.set(p0.merchant_id, type);
      }
      const gasUsed = Math.ceil(Number(r.gasUsed) / Number(r.batch));
      if (price !== null && usesGasTank(p0) && p0.gas_fee_usd18 !== null && r.gasUsed !== null)
        await chargeSettlementGas(
          client,
          p0,
          gasTrueUpMicros({
            quotedGasUsd18: BigInt(p0.gas_fee_usd18!),
            gasUsed: BigInt(r.gasUsed!),
            batch: Number(r.batch),
            effectiveGasPrice: BigInt(r.effectiveGasPrice!),
            l1Fee: r.l1Fee === null ? null : BigInt(r.l1Fee),
            nativePriceUsd18: price,
          }),
        );
      const debit = await settlementFeeCharged(client, r.id);
      const done = await transition(client, r.id, {
        from: ["deploying_wallet"],
        to: "completed",
        reason: "settled to the merchant wallet",
        set: { settlement_tx_hash: r.txHash, settled_units: r.amount.toString(), completed_at: new Date(now) },
        now,
        event: {
          name: "payment.completed",
          extra: {
            transactionHash: r.txHash,
            // Spec fields, then what the merchant was charged (the list output's `fees`, with the agent's markup).
            feeDetails: { gasUsed, gasPrice: String(r.effectiveGasPrice), usdtAmountUsed: usdt(debit), merchantType: type, ...feesOf(p0) },
          },
        },
      });
      // Only a payment this transaction completed, in the same transaction: the agent's markup and share (docs/agents.md).
      if (done) await accrueAgentEarnings(client, done, now);
    });
  }
}
