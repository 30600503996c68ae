const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID-shaped string (payment, delivery and merchant ids): checked before it reaches a uuid column. */
export const isUuid = (s: unknown): s is string => typeof s === "string" && UUID_RE.test(s);
