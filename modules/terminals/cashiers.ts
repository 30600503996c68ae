import { createHmac, randomInt } from "node:crypto";
import { and, asc, eq, isNull } from "drizzle-orm";
import type { Config } from "../../core/config.js";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { Db } from "../../db/client.js";
import { cashiers, posSessions } from "./schema.js";
import { isUniqueViolation } from "./unique-violation.js";

/**
 * Cashiers of a merchant: who sells on a POS terminal. The code is the `{CASHIER}` of a POS orderId; the PIN
 * (8 to 32 digits) signs the cashier in on a terminal. The PIN is kept only as HMAC-SHA256(HASH_SECRET,
 * `merchantId:pin`): the same PIN gives the same hash within a merchant, so PINs are unique per merchant and a
 * POS login finds its cashier by the PIN alone, yet the column tells nothing without the server's secret.
 * The PIN is never shown again after creation. Deleting a cashier keeps the row (`deleted_at`) and frees
 * its code and PIN.
 */

export const CASHIER_NOT_FOUND = "Cashier not found";
export const CASHIER_CODE_TAKEN = "A cashier with this code already exists";
export const CASHIER_PIN_TAKEN = "A cashier with this PIN already exists";

const CODE_RE = /^[A-Za-z0-9]{1,16}$/;
const MAX_NAME = 100;
const MIN_PIN = 8;
const MAX_PIN = 32;

/** A cashier as shown: never the PIN nor its hash. */
export type Cashier = { id: string; name: string; code: string; createdAt: Date };

const columns = { id: cashiers.id, name: cashiers.name, code: cashiers.code, createdAt: cashiers.createdAt };
const live = (merchantId: string) => and(eq(cashiers.merchantId, merchantId), isNull(cashiers.deletedAt));

/** HMAC-SHA256(secret, `merchantId:pin`), hex: what `cashiers.pin_hash` holds. */
export const pinHash = (secret: string, merchantId: string, pin: string) =>
  createHmac("sha256", secret).update(`${merchantId}:${pin}`).digest("hex");

/** Throws Invalid unless `pin` is 8 to 32 digits. */
export function checkPin(pin: string): void {
  if (!/^\d*$/.test(pin)) throw new Invalid("PIN must contain digits only");
  if (pin.length < MIN_PIN) throw new Invalid(`PIN must be at least ${MIN_PIN} digits`);
  if (pin.length > MAX_PIN) throw new Invalid(`PIN must be at most ${MAX_PIN} digits`);
}

const randomPin = () => String(randomInt(0, 10 ** MIN_PIN)).padStart(MIN_PIN, "0");

/**
 * A new cashier with `pin`, or a random 8-digit PIN when none is given; returns the PIN for showing once.
 * Throws Invalid, or Conflict (`A cashier with this code already exists`, `A cashier with this PIN already exists`).
 *
 * @example
 * const { cashier, pin } = await createCashier(deps, merchant.id, { name: "Alice", code: "ALICE", pin: "20481024" });
 */
export async function createCashier(
  deps: { db: Db; config: Pick<Config, "HASH_SECRET"> },
  merchantId: string,
  input: { name: string; code: string; pin?: string },
): Promise<{ cashier: Cashier; pin: string }> {
  const name = input.name.trim();
  if (!name) throw new Invalid("Cashier name is required");
  if ([...name].length > MAX_NAME) throw new Invalid(`Cashier name must be at most ${MAX_NAME} characters`);
  const code = input.code.trim();
  if (!CODE_RE.test(code)) throw new Invalid("Cashier code must be 1-16 letters or digits");
  const given = input.pin?.trim();
  if (given) checkPin(given);
  // A drawn PIN that another cashier has is drawn again (a given one is refused instead).
  for (let attempt = 0; ; attempt++) {
    const pin = given || randomPin();
    try {
      const [row] = await deps.db.orm
        .insert(cashiers)
        .values({ merchantId, name, code, pinHash: pinHash(deps.config.HASH_SECRET, merchantId, pin) })
        .returning(columns);
      return { cashier: row!, pin };
    } catch (err) {
      if (isUniqueViolation(err, "cashiers_merchant_code_idx")) throw new Conflict(CASHIER_CODE_TAKEN);
      if (isUniqueViolation(err, "cashiers_merchant_pin_idx")) {
        if (given || attempt >= 5) throw new Conflict(CASHIER_PIN_TAKEN);
        continue;
      }
      throw err;
    }
  }
}

/** The merchant's live cashiers, oldest first. */
export function listCashiers(db: Db, merchantId: string): Promise<Cashier[]> {
  return db.orm.select(columns).from(cashiers).where(live(merchantId)).orderBy(asc(cashiers.createdAt), asc(cashiers.code));
}

/**
 * Deletes a live cashier of the merchant, by id (dashboard) or code (CLI), and signs it out of every terminal.
 * Throws NotFound (`Cashier not found`) for any other cashier.
 *
 * @example
 * await deleteCashier(deps.db, merchant.id, { id: cashierId });
 */
export async function deleteCashier(db: Db, merchantId: string, by: { id: string } | { code: string }, now = new Date()): Promise<Cashier> {
  if ("id" in by && !isUuid(by.id)) throw new NotFound(CASHIER_NOT_FOUND);
  const which = "id" in by ? eq(cashiers.id, by.id) : eq(cashiers.code, by.code);
  const [row] = await db.orm
    .update(cashiers)
    .set({ deletedAt: now })
    .where(and(live(merchantId), which))
    .returning(columns);
  if (!row) throw new NotFound(CASHIER_NOT_FOUND);
  await db.orm.delete(posSessions).where(eq(posSessions.cashierId, row.id));
  return row;
}
