import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import { terminals } from "../../db/schema.js";
import { Invalid } from "../../core/errors.js";

/**
 * Point-of-sale terminals of a merchant. A payment whose orderId reads `POS-{CODE}-{CASHIER}-{TS}`
 * belongs to the merchant's live terminal of that code. Deleting a terminal keeps its row (old
 * payments keep their terminal_id) and frees the code for a new terminal.
 */

const TERMINAL_ORDER_RE = /^POS-([A-Za-z0-9]+)-([^-]+)-(\d+)$/;
const live = (merchantId: string) => and(eq(terminals.merchantId, merchantId), isNull(terminals.deletedAt));

export async function createTerminal(db: Db, merchantId: string, code: string, name: string) {
  if (!/^[A-Za-z0-9]{1,32}$/.test(code)) throw new Invalid("terminal code must be 1-32 letters or digits");
  const [row] = await db.orm.insert(terminals).values({ merchantId, code, name }).returning();
  return row!;
}

export async function listTerminals(db: Db, merchantId: string) {
  return db.orm.select().from(terminals).where(live(merchantId));
}

/** Deletes the live terminal of `code`; returns the deleted rows (none when there was none). */
export async function deleteTerminal(db: Db, merchantId: string, code: string, now = new Date()) {
  return db.orm
    .update(terminals)
    .set({ deletedAt: now })
    .where(and(live(merchantId), eq(terminals.code, code)))
    .returning();
}

/** The terminal code a `POS-{CODE}-{CASHIER}-{TS}` orderId names; null for any other orderId. */
export function terminalCodeOf(orderId: string): string | null {
  return TERMINAL_ORDER_RE.exec(orderId)?.[1] ?? null;
}

/** The id of the merchant's live terminal named by a `POS-{CODE}-...` orderId; null for any other orderId. */
export async function terminalIdForOrder(db: Db, merchantId: string, orderId: string): Promise<string | null> {
  const code = terminalCodeOf(orderId);
  if (!code) return null;
  const [row] = await db.orm
    .select({ id: terminals.id })
    .from(terminals)
    .where(and(live(merchantId), eq(terminals.code, code)));
  return row?.id ?? null;
}
