// The opaque cursor of the event feed: a position in the merchant's own feed (modules/events/sequence.ts; counted per
// merchant, so it reveals nothing of the platform's volume), as base64url of `ev:<position>`. Like core/cursor.ts,
// decoding accepts exactly what encodeFeedCursor writes: anything else is null (the caller's 400), never a value that
// reaches SQL. A cursor stays valid for ever: positions only grow, and a position whose event was purged (retention)
// still marks where the reader stands.

const BASE64URL_RE = /^[A-Za-z0-9_-]+$/;
const TEXT_RE = /^ev:(0|[1-9]\d{0,18})$/;
/** Postgres bigint's largest value. */
const MAX_POSITION = 2n ** 63n - 1n;

/** A position (decimal string of a bigint, as pg returns int8) as a cursor. */
export function encodeFeedCursor(position: string): string {
  return Buffer.from(`ev:${position}`).toString("base64url");
}

/** The position `encodeFeedCursor` wrote, or null for anything else. */
export function decodeFeedCursor(s: string): string | null {
  // Node's base64url decoder skips characters it does not know: only canonical text is ours.
  if (!BASE64URL_RE.test(s)) return null;
  const bytes = Buffer.from(s, "base64url");
  if (bytes.toString("base64url") !== s) return null;
  const m = TEXT_RE.exec(bytes.toString("utf8"));
  if (!m || BigInt(m[1]!) > MAX_POSITION) return null;
  return m[1]!;
}
