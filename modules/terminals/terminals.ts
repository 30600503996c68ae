import { and, asc, eq, inArray, isNotNull, isNull } from "drizzle-orm";
import type { ActiveChain } from "../../chains/runtime.js";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { Db } from "../../db/client.js";
import { cashiers, posSessions, terminalCashiers, terminals } from "./schema.js";
import { checkTerminalSettings, type TerminalSettingsInput } from "./terminal-settings.js";
import { isUniqueViolation } from "./unique-violation.js";

/**
 * Point-of-sale terminals of a merchant. A payment whose orderId reads `POS-{CODE}-{CASHIER}-{TS}`
 * belongs to the merchant's live terminal of that code. Deleting a terminal keeps its row (old
 * payments keep their terminal_id) and frees the code for a new terminal.
 *
 * Allowed cashiers (terminal_cashiers): a terminal without rows takes any live cashier of the merchant; one
 * with rows only those cashiers. Rows of a cashier deleted later stay (also through later edits), so deleting
 * the last allowed cashier closes the terminal instead of opening it to everyone; only an explicit `"any"`
 * opens it again.
 */

const TERMINAL_ORDER_RE = /^POS-([A-Za-z0-9]+)-([^-]+)-(\d+)$/;
const CODE_RE = /^[A-Za-z0-9]{1,32}$/;
const MAX_NAME = 100;
const live = (merchantId: string) => and(eq(terminals.merchantId, merchantId), isNull(terminals.deletedAt));

export const TERMINAL_NOT_FOUND = "Terminal not found";
export const TERMINAL_CODE_TAKEN = "A terminal with this code already exists";
export const NO_CASHIER_CHOSEN = "Check at least one cashier, or let any cashier sell";

export type TerminalRow = typeof terminals.$inferSelect;
/** A terminal with the ids of its allowed cashiers (empty: any live cashier of the merchant; deleted ones may be listed). */
export type Terminal = TerminalRow & { cashierIds: string[] };

/** Who may sell on a terminal: any live cashier of the merchant, or only the listed live cashiers. */
export type CashierAccess = "any" | { only: readonly string[] };

/** Settings and who may sell; `cashiers` undefined leaves that as it is (a new terminal: any cashier). */
export type TerminalInput = TerminalSettingsInput & { cashiers?: CashierAccess };

function checkName(name: string): string {
  const n = name.trim();
  if (!n) throw new Invalid("Terminal name is required");
  if ([...n].length > MAX_NAME) throw new Invalid(`Terminal name must be at most ${MAX_NAME} characters`);
  return n;
}

type Tx = Parameters<Parameters<Db["orm"]["transaction"]>[0]>[0];

/**
 * Sets who may sell. `"any"` removes every row; `{ only }` lists those live cashiers of the merchant and keeps the
 * rows of deleted ones (they keep a terminal whose cashiers were all deleted closed when `only` is empty). A list
 * that would leave no row is refused: an empty list would mean "any cashier".
 */
async function setCashiers(tx: Tx, merchantId: string, terminalId: string, access: CashierAccess) {
  if (access === "any") {
    await tx.delete(terminalCashiers).where(eq(terminalCashiers.terminalId, terminalId));
    return;
  }
  const wanted = [...new Set(access.only)];
  if (wanted.some((id) => !isUuid(id))) throw new Invalid("Unknown cashier");
  if (wanted.length) {
    const found = await tx
      .select({ id: cashiers.id })
      .from(cashiers)
      .where(and(eq(cashiers.merchantId, merchantId), isNull(cashiers.deletedAt), inArray(cashiers.id, wanted)));
    if (found.length !== wanted.length) throw new Invalid("Unknown cashier");
  }
  const deletedRows = await tx
    .select({ id: terminalCashiers.cashierId })
    .from(terminalCashiers)
    .innerJoin(cashiers, eq(cashiers.id, terminalCashiers.cashierId))
    .where(and(eq(terminalCashiers.terminalId, terminalId), isNotNull(cashiers.deletedAt)));
  const rows = [...new Set([...wanted, ...deletedRows.map((r) => r.id)])];
  if (!rows.length) throw new Invalid(NO_CASHIER_CHOSEN);
  await tx.delete(terminalCashiers).where(eq(terminalCashiers.terminalId, terminalId));
  await tx.insert(terminalCashiers).values(rows.map((cashierId) => ({ terminalId, cashierId })));
}

/**
 * A new terminal; `input`'s tokens are checked against `chains` (the served networks). Throws Invalid or
 * Conflict (`A terminal with this code already exists`).
 *
 * @example
 * const t = await createTerminal(deps.db, merchant.id, "SHOP1", "Front desk", { payoutAddress: "0x…", cashiers: { only: [aliceId] } }, deps.chains);
 */
export async function createTerminal(
  db: Db,
  merchantId: string,
  code: string,
  name: string,
  input: TerminalInput = {},
  chains: readonly ActiveChain[] = [],
): Promise<Terminal> {
  if (!CODE_RE.test(code)) throw new Invalid("terminal code must be 1-32 letters or digits");
  const values = { merchantId, code, name: checkName(name), ...checkTerminalSettings(chains, input) };
  try {
    return await db.orm.transaction(async (tx) => {
      const [row] = await tx.insert(terminals).values(values).returning();
      const access = input.cashiers ?? "any";
      await setCashiers(tx, merchantId, row!.id, access);
      return { ...row!, cashierIds: access === "any" ? [] : [...new Set(access.only)] };
    });
  } catch (err) {
    if (isUniqueViolation(err, "terminals_merchant_code_idx")) throw new Conflict(TERMINAL_CODE_TAKEN);
    throw err;
  }
}

/**
 * Changes a live terminal's name, settings (all replaced by `input`'s) and, when `input.cashiers` is given, who may
 * sell (left alone otherwise: a rename never changes it). Throws NotFound for another merchant's or a deleted
 * terminal, Invalid for a bad setting.
 *
 * @example
 * await updateTerminal(deps.db, merchant.id, terminalId, { name: "Till 2", payoutAddress: "0x…", cashiers: { only: [aliceId] } }, deps.chains);
 */
export async function updateTerminal(
  db: Db,
  merchantId: string,
  terminalId: string,
  input: TerminalInput & { name?: string },
  chains: readonly ActiveChain[],
): Promise<Terminal> {
  if (!isUuid(terminalId)) throw new NotFound(TERMINAL_NOT_FOUND);
  const settings = checkTerminalSettings(chains, input);
  const name = input.name === undefined ? undefined : checkName(input.name);
  await db.orm.transaction(async (tx) => {
    const [row] = await tx
      .update(terminals)
      .set({ ...settings, ...(name ? { name } : {}) })
      .where(and(live(merchantId), eq(terminals.id, terminalId)))
      .returning({ id: terminals.id });
    if (!row) throw new NotFound(TERMINAL_NOT_FOUND);
    if (input.cashiers) await setCashiers(tx, merchantId, terminalId, input.cashiers);
  });
  return getTerminal(db, merchantId, terminalId);
}

/** The merchant's live terminals with their allowed cashiers, oldest first. */
export async function listTerminals(db: Db, merchantId: string): Promise<Terminal[]> {
  const rows = await db.orm.select().from(terminals).where(live(merchantId)).orderBy(asc(terminals.createdAt), asc(terminals.code));
  if (!rows.length) return [];
  const links = await db.orm
    .select()
    .from(terminalCashiers)
    .where(
      inArray(
        terminalCashiers.terminalId,
        rows.map((r) => r.id),
      ),
    );
  return rows.map((r) => ({ ...r, cashierIds: links.filter((l) => l.terminalId === r.id).map((l) => l.cashierId) }));
}

/** One live terminal of the merchant; throws NotFound (`Terminal not found`) for any other id. */
export async function getTerminal(db: Db, merchantId: string, terminalId: string): Promise<Terminal> {
  if (!isUuid(terminalId)) throw new NotFound(TERMINAL_NOT_FOUND);
  const [row] = await db.orm
    .select()
    .from(terminals)
    .where(and(live(merchantId), eq(terminals.id, terminalId)));
  if (!row) throw new NotFound(TERMINAL_NOT_FOUND);
  const links = await db.orm.select().from(terminalCashiers).where(eq(terminalCashiers.terminalId, terminalId));
  return { ...row, cashierIds: links.map((l) => l.cashierId) };
}

/** Deletes the live terminal of `code`; returns the deleted rows (none when there was none). Its cashiers are signed out. */
export async function deleteTerminal(db: Db, merchantId: string, code: string, now = new Date()) {
  const rows = await db.orm
    .update(terminals)
    .set({ deletedAt: now })
    .where(and(live(merchantId), eq(terminals.code, code)))
    .returning();
  for (const r of rows) await db.orm.delete(posSessions).where(eq(posSessions.terminalId, r.id));
  return rows;
}

/**
 * Deletes a live terminal of the merchant by id (its POS page is gone, its cashiers signed out); throws NotFound.
 *
 * @example
 * await deleteTerminalById(deps.db, merchant.id, terminalId);
 */
export async function deleteTerminalById(db: Db, merchantId: string, terminalId: string, now = new Date()): Promise<TerminalRow> {
  if (!isUuid(terminalId)) throw new NotFound(TERMINAL_NOT_FOUND);
  const [row] = await db.orm
    .update(terminals)
    .set({ deletedAt: now })
    .where(and(live(merchantId), eq(terminals.id, terminalId)))
    .returning();
  if (!row) throw new NotFound(TERMINAL_NOT_FOUND);
  await db.orm.delete(posSessions).where(eq(posSessions.terminalId, terminalId));
  return row;
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
