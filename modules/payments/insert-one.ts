import type { KeyUse } from "../idempotency/index.js";
import { prepared, type Db } from "../../db/client.js";
import { BATCH_LOCK_TIMEOUT, boundedLocksCte } from "../../db/statement-failures.js";
import { PROMO_SLOT_LEFT_SQL } from "./promo.js";
import type { QuoteFees } from "./quote.js";

/** A new payment's columns, as create.ts computed them; the promotion and the terminal are decided by the statement. */
export type NewPaymentRow = {
  id: string;
  merchantId: string;
  orderId: string;
  description: string | null;
  chainId: number;
  tokenAddress: string;
  tokenSymbol: string;
  tokenDecimals: number;
  amountUnits: bigint;
  merchantAddress: string;
  recipientAddress: string;
  salt: string;
  redirectUrl: string | null;
  blockConfirmations: number;
  gasless: boolean;
  payerCoversFee: boolean;
  customPriceUsd: string | null;
  priceUsd: string;
  priceSource: string;
  platformFeeBps: number;
  agentId: string | null;
  agentShareBps: number;
  /** The POS terminal code of the orderId (null: none); its live terminal of the merchant is looked up. */
  terminalCode: string | null;
  expiresAt: Date;
  createdAt: Date;
  /** When the quote's price was set (quote.ts); null for a stablecoin or a custom price. */
  priceUpdatedAt: Date | null;
  /** The quote's gas fee in USD, 18 decimals (quote.ts). */
  gasFeeUsd18: bigint;
  /** Fees without the promotion, and with it when the merchant's plan has one (null: no promotion). */
  regular: QuoteFees;
  promo: QuoteFees | null;
  /** The underpayment accepted (tolerance.ts), without and with the promotion's fees. */
  tolerance: { regular: bigint; promo: bigint | null };
  /** The Idempotency-Key use the creation runs under (null: none), recorded on the payment by the INSERT itself. */
  idempotency: KeyUse | null;
};

/**
 * Registers the recipients of CTE `payment`'s rows for the indexer, through the addresses module's SQL function
 * (migration 0028: it alone writes watched_addresses), in the creating statement. An aggregate: one row for all.
 */
export const WATCH_PAYMENT_ADDRESSES = `watch_addresses(array_agg(chain_id), array_agg(recipient_address::text), array_agg('payment'::text), array_agg(id::text), array_agg(merchant_id))`;

/** A payment's Idempotency-Key use is unique: a second INSERT under it writes nothing (migration 0021). */
export const ON_KEY_USE = `ON CONFLICT (merchant_id, idempotency_api_key_id, idempotency_key, idempotency_key_id)
         WHERE idempotency_key IS NOT NULL DO NOTHING`;

/**
 * One payment in a statement of its own, as creations were written before batching (insert-batch.ts runs it for a
 * batch of one, and for each row of a failed batch): whether the
 * promotion applies (a free slot left), the POS terminal of the orderId, the payment, and its recipient registered
 * for the indexer (watched_addresses' trigger notifies it at commit), before anyone sees the address. Prepared: the
 * text varies only with whether the merchant has a promotion, the orderId a terminal code and the request a key.
 * Returns false when nothing was written: the key's use has a payment already.
 */
export async function insertPayment(db: Db, row: NewPaymentRow): Promise<boolean> {
  const { text, values } = insertOneStatement(row);
  return ((await db.pool.query(prepared(text, values))).rowCount ?? 0) > 0;
}

/** insertPayment's statement and its parameters (its plan is tested: test/modules/payments/promo-slots.test.ts). */
export function insertOneStatement(row: NewPaymentRow): { text: string; values: unknown[] } {
  const { idempotency } = row;
  const { regular, promo } = row;
  const params: unknown[] = [];
  const $ = (v: unknown) => `$${params.push(v)}`;
  const bounded = boundedLocksCte($(BATCH_LOCK_TIMEOUT));
  const byPromo = (type: string, pick: (f: QuoteFees) => unknown) =>
    promo ? `CASE WHEN promo.on THEN ${$(pick(promo))}::${type} ELSE ${$(pick(regular))}::${type} END` : `${$(pick(regular))}::${type}`;
  const merchantId = $(row.merchantId);
  const columns: Record<string, string> = {
    id: $(row.id),
    merchant_id: merchantId,
    order_id: $(row.orderId),
    description: $(row.description),
    status: "'pending'",
    chain_id: $(row.chainId),
    token_address: $(row.tokenAddress),
    token_symbol: $(row.tokenSymbol),
    token_decimals: $(row.tokenDecimals),
    amount_units: $(row.amountUnits.toString()),
    due_units: byPromo("numeric", (f) => f.dueUnits.toString()),
    underpayment_tolerance_units: promo
      ? `CASE WHEN promo.on THEN ${$(row.tolerance.promo!.toString())}::numeric ELSE ${$(row.tolerance.regular.toString())}::numeric END`
      : `${$(row.tolerance.regular.toString())}::numeric`,
    merchant_address: $(row.merchantAddress),
    recipient_address: $(row.recipientAddress),
    salt: $(row.salt),
    redirect_url: $(row.redirectUrl),
    block_confirmations: $(row.blockConfirmations),
    gasless: $(row.gasless),
    payer_covers_fee: $(row.payerCoversFee),
    custom_price_usd: $(row.customPriceUsd),
    price_usd: $(row.priceUsd),
    price_source: $(row.priceSource),
    platform_fee_bps: $(row.platformFeeBps),
    promo_applied: promo ? "promo.on" : "false",
    platform_fee_units: byPromo("numeric", (f) => f.platformFeeUnits.toString()),
    gas_fee_units: byPromo("numeric", (f) => f.gasFeeUnits.toString()),
    processing_fee_units: byPromo("numeric", (f) => f.processingFeeUnits.toString()),
    gas_tank_fee_micros: byPromo("numeric", (f) => f.gasTankFeeMicros.toString()),
    gas_fee_usd18: $(row.gasFeeUsd18.toString()),
    price_updated_at: $(row.priceUpdatedAt),
    agent_id: $(row.agentId),
    agent_fee_bps: byPromo("int", (f) => f.agentFeeBps),
    agent_fee_units: byPromo("numeric", (f) => f.agentFeeUnits.toString()),
    agent_share_bps: $(row.agentShareBps),
    terminal_id: row.terminalCode
      ? `(SELECT id FROM terminals WHERE merchant_id = ${merchantId}::uuid AND code = ${$(row.terminalCode)} AND deleted_at IS NULL LIMIT 1)`
      : "NULL",
    expires_at: $(row.expiresAt),
    created_at: $(row.createdAt),
  };
  columns.updated_at = columns.created_at!;
  if (idempotency) {
    columns.idempotency_api_key_id = $(idempotency.apiKeyId);
    columns.idempotency_key = $(idempotency.key);
    columns.idempotency_key_id = $(idempotency.useId);
  }
  const text = `WITH ${bounded},
     promo AS MATERIALIZED (SELECT ${promo ? PROMO_SLOT_LEFT_SQL(`${merchantId}::uuid`) : "false"} AS on FROM bounded),
     payment AS (
       INSERT INTO payments (${Object.keys(columns).join(", ")})
       SELECT ${Object.values(columns).join(", ")} FROM promo
       ${idempotency ? ON_KEY_USE : ""}
       RETURNING id, chain_id, recipient_address, merchant_id)
     SELECT ${WATCH_PAYMENT_ADDRESSES} FROM payment HAVING count(*) > 0`;
  return { text, values: params };
}
