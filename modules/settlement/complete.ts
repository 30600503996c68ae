import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { withTransaction } from "../../db/client.js";
import { transition } from "../payments/state-machine.js";
import type { PaymentRow } from "../payments/types.js";
import { usdt } from "./shared.js";

/**
 * Step 3: deploying_wallet -> completed (withdrawing -> withdrawn) once the Swept event of our mined
 * transaction is indexed. The amounts come from the indexed event, not from our own arithmetic.
 */
export async function complete(deps: AppDeps, chain: ActiveChain) {
  const { rows } = await deps.db.pool.query(
    `SELECT p.id, p.status, s.tx_hash, s.gas_used, s.effective_gas_price, cardinality(s.payment_ids) AS batch, w.amount, w.fee
       FROM payments p
       JOIN settlements s ON p.id = ANY(s.payment_ids) AND s.status = 'mined'
       JOIN "${deps.db.viewsSchema}".sweep w ON w.chain_id = p.chain_id AND w.wallet = lower(p.recipient_address) AND w.transaction_hash = s.tx_hash
      WHERE p.chain_id = $1 AND p.status IN ('deploying_wallet', 'withdrawing')`,
    [chain.chainId],
  );
  const merchantTypes = new Map<string, string>();
  for (const r of rows) {
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      if (r.status === "withdrawing") {
        await transition(client, r.id, {
          from: ["withdrawing"],
          to: "withdrawn",
          reason: "partial payment withdrawn",
          set: { withdrawn_units: r.amount, withdrawal_tx_hash: r.tx_hash },
          now,
          event: { name: "payment.withdrawn" },
        });
        return;
      }
      const p0 = (await client.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [r.id])).rows[0]!;
      let type = merchantTypes.get(p0.merchant_id);
      if (!type) {
        type = (await client.query(`SELECT merchant_type FROM merchants WHERE id = $1`, [p0.merchant_id])).rows[0].merchant_type as string;
        merchantTypes.set(p0.merchant_id, type);
      }
      const gasUsed = Math.ceil(Number(r.gas_used) / Number(r.batch));
      const debit = (await client.query(`SELECT COALESCE(sum(-amount_micros), 0)::text AS d FROM ledger_entries WHERE payment_id = $1`, [r.id])).rows[0].d;
      await transition(client, r.id, {
        from: ["deploying_wallet"],
        to: "completed",
        reason: "settled to the merchant wallet",
        set: { settlement_tx_hash: r.tx_hash, settled_units: r.amount, completed_at: new Date(now) },
        now,
        event: {
          name: "payment.completed",
          extra: {
            transactionHash: r.tx_hash,
            feeDetails: { gasUsed, gasPrice: String(r.effective_gas_price), usdtAmountUsed: usdt(BigInt(debit)), merchantType: type },
          },
        },
      });
    });
  }
}
