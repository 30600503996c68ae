import type pg from "pg";

// The Gas Tank ledger (`ledger_entries`): signed USDT micros; the balance is their sum, and
// `reference` makes every entry idempotent (`deposit:<transfer id>`, `fee:<payment>`, `refund:<payment>`).

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

/** Debits a payment's settlement fee (once per payment). */
export async function debitSettlementFee(db: Q, p: { id: string; merchant_id: string; chain_id: number }, micros: bigint) {
  await db.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, payment_id, chain_id, reference) VALUES ($1, 'settlement_fee', $2, $3, $4, $5)
     ON CONFLICT (reference) DO NOTHING`,
    [p.merchant_id, (-micros).toString(), p.id, p.chain_id, `fee:${p.id}`],
  );
}

/** Gives back a failed payment's settlement fee, if one was debited (once per payment). */
export async function refundSettlementFee(db: Q, paymentId: string) {
  await db.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, payment_id, chain_id, reference)
     SELECT merchant_id, 'settlement_refund', -amount_micros, payment_id, chain_id, 'refund:' || payment_id FROM ledger_entries WHERE reference = $1
     ON CONFLICT (reference) DO NOTHING`,
    [`fee:${paymentId}`],
  );
}

/** What a payment's settlement cost its Gas Tank, in micros (debits net of refunds). */
export async function settlementFeeCharged(db: Q, paymentId: string): Promise<bigint> {
  const { rows } = await db.query(`SELECT COALESCE(sum(-amount_micros), 0)::text AS d FROM ledger_entries WHERE payment_id = $1`, [
    paymentId,
  ]);
  return BigInt(rows[0].d);
}
