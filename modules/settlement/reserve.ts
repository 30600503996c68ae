import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { withTransaction } from "../../db/client.js";
import { debitSettlementFee, gasTankBalance, latestLedgerEntryId, usdt } from "../gas-tank/index.js";
import { markGasChecked, transition, type PaymentRow } from "../payments/index.js";
import { sweepFeeUnits, usesGasTank } from "./plan.js";
import { admitForSettlement, notBackingOff } from "../sanctions/index.js";

/**
 * Step 1: paid / awaiting_gas -> deploying_wallet, once a paid payment's senders pass sanctions screening. In Gas
 * Tank mode the fee is debited in the same transaction (merchant row locked, so concurrent settlements cannot
 * overdraw); a short tank moves the payment to awaiting_gas, from which it resumes by itself once the tank is funded.
 */
export async function reserve(deps: AppDeps, chain: ActiveChain): Promise<void> {
  // A payment short of gas is looked at again only once its merchant's ledger has a newer entry. A paid payment whose
  // sanctions screening could not finish waits out its backoff (modules/sanctions/waits.ts, fail closed): it neither
  // re-runs its searches every pass nor takes a place in the batch from newer payments.
  const closed = deps.config.SANCTIONS_FAIL_MODE !== "open";
  const { rows } = await deps.db.pool.query<PaymentRow>(
    `SELECT * FROM payments p
      WHERE p.chain_id = $1
        AND ((p.status = 'paid' ${closed ? `AND ${notBackingOff("payment", "p.id", "$2")}` : ""})
             OR (p.status = 'awaiting_gas' AND EXISTS (
                   SELECT 1 FROM ledger_entries l WHERE l.merchant_id = p.merchant_id AND l.id > COALESCE(p.gas_checked_ledger_id, 0))))
      ORDER BY p.paid_at LIMIT 200`,
    closed ? [chain.chainId, new Date(deps.now())] : [chain.chainId],
  );
  // Sanctions screening before any money moves (modules/sanctions/admit.ts): a flagged sender holds the payment
  // (`sanctioned`); an unavailable source or an unidentified native sender leaves it `paid` (fail closed) unless
  // SANCTIONS_FAIL_MODE=open. `awaiting_gas` payments are screened again, with every other sweep, just before the
  // sweep is signed (send.ts).
  const admitted = await admitForSettlement(
    deps,
    chain,
    rows.filter((p) => p.status === "paid"),
  );
  for (const p of rows) {
    if (p.status === "paid" && !admitted.has(p.id)) continue;
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      if (usesGasTank(p)) {
        // NO KEY UPDATE: serialises this merchant's settlements without blocking the foreign-key checks of new payments.
        await client.query(`SELECT id FROM merchants WHERE id = $1 FOR NO KEY UPDATE`, [p.merchant_id]);
        const need = BigInt(p.gas_tank_fee_micros);
        const balance = await gasTankBalance(client, p.merchant_id);
        if (balance < need) {
          const seen = await latestLedgerEntryId(client, p.merchant_id);
          if (p.status === "awaiting_gas") await markGasChecked(client, p.id, seen);
          else
            await transition(client, p.id, {
              from: ["paid"],
              to: "awaiting_gas",
              reason: "Gas Tank balance insufficient",
              set: { gas_checked_ledger_id: seen },
              now,
              event: {
                name: "payment.awaiting_gas",
                extra: { estimatedFeeUsdt: usdt(need), gasTankBalance: usdt(balance), requiredTopUp: usdt(need - balance) },
              },
            });
          return;
        }
        const moved = await transition(client, p.id, {
          from: ["paid", "awaiting_gas"],
          to: "deploying_wallet",
          reason: "settlement reserved",
          now,
        });
        if (moved && need > 0n) await debitSettlementFee(client, p, need);
        return;
      }
      if (sweepFeeUnits(p) > BigInt(p.received_units)) {
        await transition(client, p.id, {
          from: ["paid"],
          to: "failed",
          reason: "fees exceed the amount received",
          set: { failure_reason: "fees exceed the amount received" },
          event: { name: "payment.failed", extra: { reason: "fees exceed the amount received" } },
          now,
        });
        return;
      }
      await transition(client, p.id, { from: ["paid"], to: "deploying_wallet", reason: "settlement reserved", now });
    });
  }
}
