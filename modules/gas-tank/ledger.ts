import type pg from "pg";

// The Gas Tank ledger (`ledger_entries`): signed USDT micros; the balance is their sum, and
// `reference` makes every entry idempotent (`deposit:<transfer id>@<block hash>`, `reorg:<deposit reference>`,
// `fee:<payment>[:n]`, `refund:<payment>[:n]`, `gas:<payment>`).

type Q = Pick<pg.Pool, "query">;

export async function gasTankBalance(db: Q, merchantId: string): Promise<bigint> {
  const { rows } = await db.query(`SELECT COALESCE(sum(amount_micros), 0)::text AS b FROM ledger_entries WHERE merchant_id = $1`, [
    merchantId,
  ]);
  return BigInt(rows[0].b);
}

/** Id of the merchant's newest ledger entry ("0" when none): a short tank is rechecked only after a newer one. */
export async function latestLedgerEntryId(db: Q, merchantId: string): Promise<string> {
  const { rows } = await db.query(`SELECT COALESCE(max(id), 0)::text AS id FROM ledger_entries WHERE merchant_id = $1`, [merchantId]);
  return rows[0].id;
}

/**
 * Debits a payment's settlement fee: once per reservation. A payment re-orged back to pending was refunded
 * and is debited again when it is reserved again (`fee:<payment>`, then `fee:<payment>:2`, …).
 */
export async function debitSettlementFee(db: Q, p: { id: string; merchant_id: string; chain_id: number }, micros: bigint) {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ledger_entries WHERE payment_id = $1 AND kind = 'settlement_fee'`,
    [p.id],
  );
  const n = rows[0]!.n;
  await db.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, payment_id, chain_id, reference) VALUES ($1, 'settlement_fee', $2, $3, $4, $5)
     ON CONFLICT (reference) DO NOTHING`,
    [p.merchant_id, (-micros).toString(), p.id, p.chain_id, n === 0 ? `fee:${p.id}` : `fee:${p.id}:${n + 1}`],
  );
}

/** Gives back every settlement fee of the payment not refunded yet (`refund:<payment>[:n]` beside each `fee:`). */
export async function refundSettlementFee(db: Q, paymentId: string) {
  await db.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, payment_id, chain_id, reference)
     SELECT merchant_id, 'settlement_refund', -amount_micros, payment_id, chain_id, 'refund:' || substr(reference, 5)
       FROM ledger_entries WHERE payment_id = $1 AND kind = 'settlement_fee'
     ON CONFLICT (reference) DO NOTHING`,
    [paymentId],
  );
}

/**
 * The gas of a completed payment charged at what its sweep cost (modules/settlement/gas-true-up.ts): `extraMicros`
 * more (negative: given back) than the quote debited, once per payment (`gas:<payment>`). Nothing when they agree.
 */
export async function chargeSettlementGas(db: Q, p: { id: string; merchant_id: string; chain_id: number }, extraMicros: bigint) {
  if (extraMicros === 0n) return;
  await db.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, payment_id, chain_id, reference) VALUES ($1, 'settlement_gas', $2, $3, $4, $5)
     ON CONFLICT (reference) DO NOTHING`,
    [p.merchant_id, (-extraMicros).toString(), p.id, p.chain_id, `gas:${p.id}`],
  );
}

/** What a payment's settlement cost its Gas Tank, in micros (debits net of refunds). */
export async function settlementFeeCharged(db: Q, paymentId: string): Promise<bigint> {
  const { rows } = await db.query(`SELECT COALESCE(sum(-amount_micros), 0)::text AS d FROM ledger_entries WHERE payment_id = $1`, [
    paymentId,
  ]);
  return BigInt(rows[0].d);
}

/**
 * A one-time debit of `micros` for the operation `reference` names, and its refund (`refundReference`, the debit
 * negated): each at most once, by the unique `reference`. A refund of a debit that was never written writes nothing.
 */
async function debitOnce(db: Q, kind: string, e: { merchantId: string; chainId: number; reference: string }, micros: bigint) {
  await db.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, chain_id, reference) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (reference) DO NOTHING`,
    [e.merchantId, kind, (-micros).toString(), e.chainId, e.reference],
  );
}
async function refundOnce(db: Q, kind: string, debitReference: string, refundReference: string) {
  await db.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, chain_id, reference)
     SELECT merchant_id, $1, -amount_micros, chain_id, $3 FROM ledger_entries WHERE reference = $2
     ON CONFLICT (reference) DO NOTHING`,
    [kind, debitReference, refundReference],
  );
}

/** Debits a recovery's fee (modules/payments/recovery-fee.ts): once per recovery, whatever re-signing follows. */
export async function debitRecoveryFee(db: Q, r: { id: string; merchantId: string; chainId: number }, micros: bigint) {
  await debitOnce(db, "recovery_fee", { ...r, reference: `recovery-fee:${r.id}` }, micros);
}

/** Gives a recovery's fee back (its transaction was dropped, never mined, and it is refused when signed again): once. */
export async function refundRecoveryFee(db: Q, recoveryId: string) {
  await refundOnce(db, "recovery_refund", `recovery-fee:${recoveryId}`, `recovery-refund:${recoveryId}`);
}

/**
 * Debits the gas of a Vault sweep of a token outside the registry (modules/vault/sweep-charge.ts), in the transaction
 * that stores the signed sweep: once per sweep transaction.
 */
export async function debitVaultSweepFee(db: Q, s: { sweepId: string; merchantId: string; chainId: number }, micros: bigint) {
  await debitOnce(db, "vault_sweep_fee", { ...s, reference: `vault-sweep-fee:${s.sweepId}` }, micros);
}

/** Gives a Vault sweep's fee back (its transaction was dropped: it never mined, no gas was spent): once. */
export async function refundVaultSweepFee(db: Q, sweepId: string) {
  await refundOnce(db, "vault_sweep_refund", `vault-sweep-fee:${sweepId}`, `vault-sweep-refund:${sweepId}`);
}
