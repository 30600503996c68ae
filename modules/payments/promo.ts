import type pg from "pg";
import type { AppDeps, Merchant } from "../../core/deps.js";
import { authenticate, type Caller } from "../merchants/index.js";

/** Spec: the platform fee is waived on an account's first 30 completed transactions (not with the Member plan). */
export const PROMO_FREE_TRANSACTIONS = 30;

/** Promotion payments that hold a slot (completed or still open): the rows of payments_promo_slots_idx. */
const SLOT_HOLDERS = `promo_applied AND status NOT IN ('expired', 'failed', 'cancelled', 'withdrawn')`;

/** Completed promotion payments, and those still open that have reserved a free slot. */
export async function promoCounts(db: Pick<pg.Pool, "query">, merchantId: string) {
  const { rows } = await db.query(
    `SELECT count(*) FILTER (WHERE status = 'completed')::int AS used, count(*) FILTER (WHERE status <> 'completed')::int AS reserved
       FROM payments WHERE merchant_id = $1 AND ${SLOT_HOLDERS}`,
    [merchantId],
  );
  return { used: rows[0].used as number, reserved: rows[0].reserved as number };
}

/** GET /promo-status and GraphQL `promoStatus`. Throws Unauthorized. */
export async function getPromoStatus(deps: Pick<AppDeps, "db" | "now">, caller: Caller) {
  return { freeTransactions: await promoStatus(deps.db.pool, await authenticate(deps, caller)) };
}

export async function promoStatus(db: Pick<pg.Pool, "query">, merchant: Merchant) {
  const { used } = await promoCounts(db, merchant.id);
  const remaining = merchant.merchantType === "member" ? 0 : Math.max(0, PROMO_FREE_TRANSACTIONS - used);
  return { eligible: remaining > 0, used, remaining };
}

/** Whether the merchant's plan has the promotion at all (the Member plan pays no platform fee anyway). */
export const hasPromotion = (merchant: Merchant) => merchant.merchantType !== "member";

/**
 * SQL (a bigint) of the slots merchant `merchantSql` holds: its completed and open promotion payments (promoCounts'
 * `used + reserved`). A new payment gets the promotion while this is below PROMO_FREE_TRANSACTIONS (insert-batch.ts, insert-one.ts).
 */
export const PROMO_SLOTS_HELD_SQL = (merchantSql: string) =>
  `(SELECT count(*) FROM payments WHERE merchant_id = ${merchantSql} AND ${SLOT_HOLDERS})`;

/** SQL (a boolean) of whether a new payment of merchant `merchantSql` gets the promotion: a slot left (insert-one.ts). */
export const PROMO_SLOT_LEFT_SQL = (merchantSql: string) => `(${PROMO_SLOTS_HELD_SQL(merchantSql)} < ${PROMO_FREE_TRANSACTIONS})`;
