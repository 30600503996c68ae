import type pg from "pg";
import { Invalid } from "../../core/errors.js";
import { InvalidAmountError, parseAmount } from "../../core/money.js";
import { setMerchantGasTankAlert } from "../merchants/index.js";
import { GAS_TANK_DECIMALS } from "./usdt.js";

// The low-balance alert of the dashboard (`merchants.gas_tank_alert_micros`): the Gas Tank screen warns when
// the balance is below it. Null: no alert.

type Q = Pick<pg.Pool, "query">;

export const ALERT_FORMAT_ERROR = "Enter the alert threshold in USDT with at most 6 decimals, e.g. 25 or 12.345678";

/**
 * The threshold as typed: a plain decimal USDT amount, parsed exactly (no float): "12.345678" is 12345678
 * micros; blank is null (no alert). Throws Invalid for anything else (signs, exponents, a 7th decimal).
 *
 * @example
 * parseAlertThreshold("12.345678"); // 12_345_678n
 * parseAlertThreshold("  "); // null
 */
export function parseAlertThreshold(input: string): bigint | null {
  const text = input.trim();
  if (text === "") return null;
  try {
    return parseAmount(text, GAS_TANK_DECIMALS);
  } catch (e) {
    if (e instanceof InvalidAmountError) throw new Invalid(ALERT_FORMAT_ERROR);
    throw e;
  }
}

/** The merchant's threshold in micros, or null when none is set. */
export async function gasTankAlert(db: Q, merchantId: string): Promise<bigint | null> {
  const { rows } = await db.query<{ a: string | null }>(`SELECT gas_tank_alert_micros::text AS a FROM merchants WHERE id = $1`, [
    merchantId,
  ]);
  return rows[0]?.a == null ? null : BigInt(rows[0].a);
}

/** Sets (or with null clears) the merchant's threshold. */
export async function setGasTankAlert(db: Q, merchantId: string, micros: bigint | null): Promise<void> {
  await setMerchantGasTankAlert(db, merchantId, micros);
}

/** Whether the balance calls for the warning: strictly below a set threshold. */
export const belowAlert = (balanceMicros: bigint, threshold: bigint | null) => threshold !== null && balanceMicros < threshold;

/**
 * The Gas Tank of a merchant below its alert threshold, or null (no threshold, or not below it): the dashboard's
 * banner on every screen. One statement: the threshold, and the balance summed only when a threshold is set.
 *
 * @example
 * await lowGasTank(db, merchantId); // { balanceMicros: 5_000_000n, thresholdMicros: 20_000_000n } or null
 */
export async function lowGasTank(db: Q, merchantId: string): Promise<{ balanceMicros: bigint; thresholdMicros: bigint } | null> {
  const { rows } = await db.query<{ threshold: string | null; balance: string | null }>(
    `SELECT m.gas_tank_alert_micros::text AS threshold,
            CASE WHEN m.gas_tank_alert_micros IS NULL THEN NULL
                 ELSE (SELECT COALESCE(sum(amount_micros), 0) FROM ledger_entries WHERE merchant_id = m.id)::text END AS balance
       FROM merchants m WHERE m.id = $1`,
    [merchantId],
  );
  const r = rows[0];
  if (r?.threshold == null || r.balance == null) return null;
  const [balanceMicros, thresholdMicros] = [BigInt(r.balance), BigInt(r.threshold)];
  return belowAlert(balanceMicros, thresholdMicros) ? { balanceMicros, thresholdMicros } : null;
}
