import { isUuid } from "./ids.js";

/**
 * The one opaque cursor of keyset pagination (newest first, `ORDER BY created_at DESC, id DESC`):
 * the (created_at, id) of a page's last row, as base64url of the JSON `["<created_at>", "<id>"]`.
 * created_at keeps Postgres' microseconds (a millisecond cursor would skip or repeat rows created within
 * the same millisecond), so it is read from SQL with `cursorAtSql` rather than from a JS Date.
 * Decoding accepts exactly what `encodeCursor` writes: anything forged is null (the caller's 400),
 * never a value that reaches SQL and fails there.
 *
 * @example
 * const rows = await q(`SELECT *, ${cursorAtSql("created_at")} AS cursor_at FROM t WHERE (created_at, id) < ($1, $2) ...`);
 * const next = encodeCursor({ at: last.cursor_at, id: last.id });
 */
export type Cursor = {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds). */
  at: string;
  /** The row's UUID, lowercase as Postgres writes it. */
  id: string;
};

const AT_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const BASE64URL_RE = /^[A-Za-z0-9_-]+$/;

/** A timestamptz column as a cursor's `at` (UTC, microseconds). */
export const cursorAtSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.at, c.id])).toString("base64url");
}

/** The cursor `encodeCursor` wrote, or null for anything else. */
export function decodeCursor(s: string): Cursor | null {
  // Node's base64url decoder skips characters it does not know: only canonical text is ours.
  if (!BASE64URL_RE.test(s)) return null;
  const bytes = Buffer.from(s, "base64url");
  if (bytes.toString("base64url") !== s) return null;
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString("utf8"));
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length !== 2) return null;
  const [at, id] = v as unknown[];
  if (typeof at !== "string" || !AT_RE.test(at) || !realInstant(at)) return null;
  if (!isUuid(id) || id !== id.toLowerCase()) return null;
  return { at, id };
}

/**
 * Date.parse rolls impossible dates over (2024-02-30 is March 1st): the instant must read back the same.
 * No row predates 1970, and Postgres refuses year 0 (a 500 if it got there).
 */
function realInstant(at: string): boolean {
  const ms = Date.parse(at);
  return ms >= 0 && new Date(ms).toISOString().slice(0, 23) === at.slice(0, 23);
}
