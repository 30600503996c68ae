import type { AppDeps } from "../../core/deps.js";
import { NotFound, Unauthorized } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { Db } from "../../db/client.js";
import { hashToken, newToken } from "../merchants/index.js";
import { pinHash } from "./cashiers.js";
import { pinFailed, pinSucceeded, reservePinAttempt } from "./pin-throttle.js";
import { TERMINAL_NOT_FOUND } from "./terminals.js";

/**
 * A cashier signed in on one terminal's POS page. The PIN is checked against the terminal's merchant's live
 * cashiers (and the terminal's allowed cashiers, if it names any); the session is a random token in a cookie
 * scoped to the terminal's page, of which only the SHA-256 is stored. It lasts 12 hours and ends early when the
 * terminal or the cashier is deleted or the cashier is no longer allowed there.
 *
 * Wrong PINs lock out the client address that types them, per terminal and everywhere, never the shop
 * (pin-throttle.ts). The PIN of a cashier the terminal does not allow is answered and counted exactly like a
 * wrong PIN: the page must not tell which PINs are real.
 */

export const POS_COOKIE = "cp_pos";
export const POS_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
export const WRONG_PIN = "Wrong PIN";

/** A live terminal as the POS needs it. */
export type PosTerminal = {
  id: string;
  merchantId: string;
  code: string;
  name: string;
  payoutAddress: string | null;
  defaultChainId: number | null;
  defaultToken: string | null;
  allowedTokens: string[];
};
export type PosCashier = { id: string; code: string; name: string };
export type PosSession = { terminal: PosTerminal; cashier: PosCashier };

const TERMINAL_COLUMNS = `t.id, t.merchant_id, t.code, t.name, t.payout_address, t.default_chain_id, t.default_token, t.allowed_tokens`;
type TerminalSqlRow = {
  id: string;
  merchant_id: string;
  code: string;
  name: string;
  payout_address: string | null;
  default_chain_id: number | null;
  default_token: string | null;
  allowed_tokens: string[];
};
const toTerminal = (r: TerminalSqlRow): PosTerminal => ({
  id: r.id,
  merchantId: r.merchant_id,
  code: r.code,
  name: r.name,
  payoutAddress: r.payout_address,
  defaultChainId: r.default_chain_id,
  defaultToken: r.default_token,
  allowedTokens: r.allowed_tokens,
});

/** Whether cashier `c` may sell on terminal `t` (SQL): the terminal names no cashiers, or names this one. */
const ALLOWED_SQL = `(NOT EXISTS (SELECT 1 FROM terminal_cashiers a WHERE a.terminal_id = t.id)
   OR EXISTS (SELECT 1 FROM terminal_cashiers a WHERE a.terminal_id = t.id AND a.cashier_id = c.id))`;

/** A live terminal by id (any merchant: the id is the POS page's address), or null. */
export async function posTerminal(db: Db, terminalId: string): Promise<PosTerminal | null> {
  if (!isUuid(terminalId)) return null;
  const { rows } = await db.pool.query<TerminalSqlRow>(
    `SELECT ${TERMINAL_COLUMNS} FROM terminals t WHERE t.id = $1 AND t.deleted_at IS NULL`,
    [terminalId],
  );
  return rows[0] ? toTerminal(rows[0]) : null;
}

/** The live cashier of the terminal's merchant with this PIN that the terminal allows, or null. */
async function cashierByPin(deps: Pick<AppDeps, "db" | "config">, terminal: PosTerminal, pin: unknown): Promise<PosCashier | null> {
  if (typeof pin !== "string" || !/^\d{1,64}$/.test(pin.trim())) return null;
  // A cashier the terminal does not allow is not found, like a wrong PIN.
  const { rows } = await deps.db.pool.query<PosCashier>(
    `SELECT c.id, c.code, c.name
       FROM cashiers c JOIN terminals t ON t.id = $3
      WHERE c.merchant_id = $1 AND c.pin_hash = $2 AND c.deleted_at IS NULL AND ${ALLOWED_SQL}`,
    [terminal.merchantId, pinHash(deps.config.HASH_SECRET, terminal.merchantId, pin.trim()), terminal.id],
  );
  return rows[0] ?? null;
}

/**
 * Signs a cashier in on a terminal by PIN, from client address `from`. Throws NotFound (no live terminal),
 * RateLimited (`Too many PIN attempts`) or Unauthorized (`Wrong PIN`: no live cashier of the merchant has this
 * PIN, or the terminal does not allow that cashier).
 *
 * @example
 * const { token, expiresAt } = await posLogin(deps, terminalId, "20481024", "203.0.113.7");
 */
export async function posLogin(
  deps: Pick<AppDeps, "db" | "now" | "config">,
  terminalId: string,
  pin: unknown,
  from: string,
): Promise<{ token: string; expiresAt: Date; session: PosSession }> {
  const terminal = await posTerminal(deps.db, terminalId);
  if (!terminal) throw new NotFound(TERMINAL_NOT_FOUND);
  const attempt = await reservePinAttempt(deps, terminal, from);
  const cashier = await cashierByPin(deps, terminal, pin);
  if (!cashier) {
    await pinFailed(deps, attempt);
    throw new Unauthorized(WRONG_PIN);
  }
  await pinSucceeded(deps, attempt);
  const token = newToken();
  const expiresAt = new Date(deps.now() + POS_SESSION_TTL_MS);
  await deps.db.pool.query(`INSERT INTO pos_sessions (terminal_id, cashier_id, token_hash, expires_at) VALUES ($1, $2, $3, $4)`, [
    terminal.id,
    cashier.id,
    hashToken(token),
    expiresAt,
  ]);
  return { token, expiresAt, session: { terminal, cashier: { id: cashier.id, code: cashier.code, name: cashier.name } } };
}

/**
 * The session of a POS cookie on this terminal, or null: expired, signed out, for another terminal, or its
 * terminal or cashier deleted, or the cashier no longer allowed there.
 *
 * @example
 * const session = await posSession(deps, terminalId, getCookie(c, POS_COOKIE));
 */
export async function posSession(
  deps: Pick<AppDeps, "db" | "now">,
  terminalId: string,
  token: string | undefined,
): Promise<PosSession | null> {
  if (!token || !isUuid(terminalId)) return null;
  const { rows } = await deps.db.pool.query<TerminalSqlRow & { cashier_id: string; cashier_code: string; cashier_name: string }>(
    `SELECT ${TERMINAL_COLUMNS}, c.id AS cashier_id, c.code AS cashier_code, c.name AS cashier_name
       FROM pos_sessions s
       JOIN terminals t ON t.id = s.terminal_id AND t.deleted_at IS NULL
       JOIN cashiers c ON c.id = s.cashier_id AND c.deleted_at IS NULL AND c.merchant_id = t.merchant_id
      WHERE s.token_hash = $1 AND s.terminal_id = $2 AND s.expires_at > $3 AND ${ALLOWED_SQL}`,
    [hashToken(token), terminalId, new Date(deps.now())],
  );
  const r = rows[0];
  return r ? { terminal: toTerminal(r), cashier: { id: r.cashier_id, code: r.cashier_code, name: r.cashier_name } } : null;
}

/** Ends the session of a POS cookie (and any expired ones while at it). */
export async function posLogout(deps: Pick<AppDeps, "db" | "now">, token: string | undefined): Promise<void> {
  await deps.db.pool.query(`DELETE FROM pos_sessions WHERE token_hash = $1 OR expires_at < $2`, [
    hashToken(token ?? ""),
    new Date(deps.now()),
  ]);
}
