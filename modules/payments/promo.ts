import type pg from "pg";
import type { AppDeps, Merchant } from "../../core/deps.js";
import { authenticate, type Caller } from "../merchants/authenticate.js";

/** Spec: the platform fee is waived on an account's first 30 completed transactions (not with the Member plan). */
export const PROMO_FREE_TRANSACTIONS = 30;

/** Completed promotion payments, and those still open that have reserved a free slot. */
export async function promoCounts(db: Pick<pg.Pool, "query">, merchantId: string) {
  const { rows } = await db.query(
    `SELECT count(*) FILTER (WHERE status = 'completed')::int AS used,
            count(*) FILTER (WHERE status NOT IN ('completed', 'expired', 'failed', 'cancelled', 'withdrawn'))::int AS reserved
       FROM payments WHERE merchant_id = $1 AND promo_applied`,
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

/** Whether a new payment gets the promotion: a free slot left after completed and open promotion payments. */
export async function promoApplies(db: Pick<pg.Pool, "query">, merchant: Merchant): Promise<boolean> {
  if (merchant.merchantType === "member") return false;
  const { used, reserved } = await promoCounts(db, merchant.id);
  return used + reserved < PROMO_FREE_TRANSACTIONS;
}
