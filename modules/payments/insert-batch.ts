import { batcher, QUEUE_FULL, type Batcher } from "../../core/batcher.js";
import { Unavailable } from "../../core/errors.js";
import { prepared, type Db } from "../../db/client.js";
import { BATCH_LOCK_TIMEOUT, boundedLocksCte, failUnless, isSplittable, retryConflicts } from "../../db/statement-failures.js";
import { insertPayment, ON_KEY_USE, WATCH_PAYMENT_ADDRESSES, type NewPaymentRow } from "./insert-one.js";
import { PROMO_FREE_TRANSACTIONS, PROMO_SLOTS_HELD_SQL } from "./promo.js";
import type { QuoteFees } from "./quote.js";

type Input = [name: string, type: string, value: (r: NewPaymentRow) => unknown];

const str = (v: bigint) => v.toString();
/** The fee columns: each is given twice, without and with the promotion (null when the merchant has none). */
const FEES: [column: string, type: string, pick: (f: QuoteFees) => unknown][] = [
  ["due_units", "numeric", (f) => str(f.dueUnits)],
  ["platform_fee_units", "numeric", (f) => str(f.platformFeeUnits)],
  ["gas_fee_units", "numeric", (f) => str(f.gasFeeUnits)],
  ["processing_fee_units", "numeric", (f) => str(f.processingFeeUnits)],
  ["gas_tank_fee_micros", "numeric", (f) => str(f.gasTankFeeMicros)],
  ["agent_fee_bps", "int", (f) => f.agentFeeBps],
  ["agent_fee_units", "numeric", (f) => str(f.agentFeeUnits)],
];

/** The statement's input columns (one array parameter each, in this order) and how a row gives them. */
const INPUTS: Input[] = [
  ["id", "uuid", (r) => r.id],
  ["merchant_id", "uuid", (r) => r.merchantId],
  ["order_id", "text", (r) => r.orderId],
  ["description", "text", (r) => r.description],
  ["chain_id", "int", (r) => r.chainId],
  ["token_address", "text", (r) => r.tokenAddress],
  ["token_symbol", "text", (r) => r.tokenSymbol],
  ["token_decimals", "int", (r) => r.tokenDecimals],
  ["amount_units", "numeric", (r) => str(r.amountUnits)],
  ["merchant_address", "text", (r) => r.merchantAddress],
  ["recipient_address", "text", (r) => r.recipientAddress],
  ["salt", "text", (r) => r.salt],
  ["redirect_url", "text", (r) => r.redirectUrl],
  ["block_confirmations", "int", (r) => r.blockConfirmations],
  ["gasless", "bool", (r) => r.gasless],
  ["payer_covers_fee", "bool", (r) => r.payerCoversFee],
  ["custom_price_usd", "text", (r) => r.customPriceUsd],
  ["price_usd", "text", (r) => r.priceUsd],
  ["price_source", "text", (r) => r.priceSource],
  ["platform_fee_bps", "int", (r) => r.platformFeeBps],
  ["gas_fee_usd18", "numeric", (r) => str(r.gasFeeUsd18)],
  ["price_updated_at", "timestamptz", (r) => r.priceUpdatedAt],
  ["agent_id", "uuid", (r) => r.agentId],
  ["agent_share_bps", "int", (r) => r.agentShareBps],
  ["terminal_code", "text", (r) => r.terminalCode],
  ["expires_at", "timestamptz", (r) => r.expiresAt],
  ["created_at", "timestamptz", (r) => r.createdAt],
  ["has_promo", "bool", (r) => r.promo !== null],
  ...FEES.flatMap(([column, type, pick]): Input[] => [
    [`${column}_regular`, type, (r) => pick(r.regular)],
    [`${column}_promo`, type, (r) => (r.promo ? pick(r.promo) : null)],
  ]),
  ["idempotency_api_key_id", "uuid", (r) => r.idempotency?.apiKeyId ?? null],
  ["idempotency_key", "text", (r) => r.idempotency?.key ?? null],
  ["idempotency_key_id", "uuid", (r) => r.idempotency?.useId ?? null],
  ["underpayment_tolerance_units_regular", "numeric", (r) => str(r.tolerance.regular)],
  ["underpayment_tolerance_units_promo", "numeric", (r) => (r.tolerance.promo === null ? null : str(r.tolerance.promo))],
];

/** Columns copied from the input as they are. */
const COPIED = [
  "id",
  "merchant_id",
  "order_id",
  "description",
  "chain_id",
  "token_address",
  "token_symbol",
  "token_decimals",
  "amount_units",
  "merchant_address",
  "recipient_address",
  "salt",
  "redirect_url",
  "block_confirmations",
  "gasless",
  "payer_covers_fee",
  "custom_price_usd",
  "price_usd",
  "price_source",
  "platform_fee_bps",
  "gas_fee_usd18",
  "price_updated_at",
  "agent_id",
  "agent_share_bps",
  "expires_at",
  "created_at",
  "idempotency_api_key_id",
  "idempotency_key",
  "idempotency_key_id",
];

/**
 * N payments in one statement (one round trip, one commit), each with its promotion slot, its POS terminal and its
 * recipient registered for the indexer (watched_addresses' trigger NOTIFYs each address at commit), before anyone sees
 * the address. Fixed text (array parameters), so prepared once per connection.
 *
 * The promotion: a payment gets it when its merchant's plan has one and a slot is left after the slots its merchant
 * holds plus those taken by the merchant's earlier rows of this batch (row_number): two payments of one merchant in a
 * batch never share the last slot. The slots are counted in the statement's snapshot, as the single-row statement did;
 * one batch runs at a time per process (insertBatcher), so batches of one process see each other's slots.
 *
 * An address already watched is not registered again: the statement then fails (a guard, nothing written) and its
 * rows go in parts down to insert-one.ts, which skips it as creations always did.
 *
 * A row under an Idempotency-Key use that has its payment already is not written (ON_KEY_USE): the statement returns
 * the ids it wrote, and create.ts answers with that use's payment.
 */
const INSERT_SQL = `WITH ${boundedLocksCte(`$${INPUTS.length + 1}`)},
i AS (
  SELECT u.* FROM bounded, unnest(${INPUTS.map(([, type], n) => `$${n + 1}::${type}[]`).join(", ")})
    WITH ORDINALITY AS u(${INPUTS.map(([name]) => name).join(", ")}, ord)
), promo AS (
  SELECT ord, CASE WHEN has_promo
    THEN ${PROMO_SLOTS_HELD_SQL("i.merchant_id")} + row_number() OVER (PARTITION BY merchant_id, has_promo ORDER BY ord) <= ${PROMO_FREE_TRANSACTIONS}
    ELSE false END AS promo_on
  FROM i
), payment AS (
  INSERT INTO payments (${[...COPIED, "status", "updated_at", "terminal_id", "promo_applied", ...FEES.map(([c]) => c), "underpayment_tolerance_units"].join(", ")})
  SELECT ${[
    ...COPIED.map((c) => `i.${c}`),
    "'pending'",
    "i.created_at",
    "(SELECT t.id FROM terminals t WHERE t.merchant_id = i.merchant_id AND t.code = i.terminal_code AND t.deleted_at IS NULL LIMIT 1)",
    "p.promo_on",
    ...FEES.map(([c]) => `CASE WHEN p.promo_on THEN i.${c}_promo ELSE i.${c}_regular END`),
    "CASE WHEN p.promo_on THEN i.underpayment_tolerance_units_promo ELSE i.underpayment_tolerance_units_regular END",
  ].join(",\n    ")}
  FROM i JOIN promo p ON p.ord = i.ord
  ${ON_KEY_USE}
  RETURNING id, chain_id, recipient_address, merchant_id
), watched AS (
  SELECT ${WATCH_PAYMENT_ADDRESSES} AS registered FROM payment
)
SELECT (SELECT array_agg(id::text) FROM payment) AS written,
  ${failUnless("(SELECT registered FROM watched)", "(SELECT count(*) FROM payment)", "addresses registered")} AS failed`;

/** The batch statement of `rows` and its parameters (its plan is tested: test/modules/payments/promo-slots.test.ts). */
export function insertBatchStatement(rows: NewPaymentRow[]): { text: string; values: unknown[] } {
  return { text: INSERT_SQL, values: [...INPUTS.map(([, , value]) => rows.map(value)), BATCH_LOCK_TIMEOUT] };
}

/**
 * Inserts `rows` (two or more: insertBatcher's batch) in one statement. Per row, whether it was written: false only
 * for a row whose Idempotency-Key use has its payment already.
 */
export async function insertPayments(db: Db, rows: NewPaymentRow[]): Promise<boolean[]> {
  const { text, values } = insertBatchStatement(rows);
  const { rows: out } = await db.pool.query<{ written: string[] | null }>(prepared(text, values));
  const written = new Set(out[0]?.written ?? []);
  // Committed: a row without a key left out is reported, never written again.
  const lost = rows.filter((r) => !r.idempotency && !written.has(r.id));
  if (lost.length) throw new Error(`insertPayments: ${lost.length} of ${rows.length} payments without a key not written`);
  return rows.map((r) => written.has(r.id));
}

/** Largest batch: about what concurrent creations of one process wait for at a time under load (bench/creation.ts: 32). */
export const INSERT_BATCH_MAX = 64;

const batchers = new WeakMap<Db, Batcher<NewPaymentRow, boolean>>();

/**
 * The payment inserts of a database (core/batcher.ts): creations that arrive while the previous batch is being written
 * are written together by the next one, one batch at a time (promotion slots). A creation alone runs insert-one.ts,
 * the statement it always had. A batch that Postgres refuses for a row's data is written again in halves, in order,
 * so only that row's creation fails, with the error it had before. Resolves to whether the row was written (false: its
 * Idempotency-Key use has its payment already). Creations under a key are batched like the others, so they are
 * ordered with them too (promotion slots).
 */
export function insertBatcher(db: Db): Batcher<NewPaymentRow, boolean> {
  let b = batchers.get(db);
  if (!b)
    batchers.set(
      db,
      (b = batcher({
        name: "payments",
        run: (rows) => insertPayments(db, rows),
        runOne: (row) => retryConflicts(() => insertPayment(db, row)),
        splittable: isSplittable,
        split: "halves",
        full: () => new Unavailable(QUEUE_FULL),
        maxSize: INSERT_BATCH_MAX,
      })),
    );
  return b;
}
