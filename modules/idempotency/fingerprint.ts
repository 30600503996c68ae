import { createHash } from "node:crypto";
import { JsonNumber, parseJsonLossless } from "../pricing/index.js";

// The fingerprint of a request under an idempotency key: a retry must send the same request, and "the same" should not
// depend on formatting. A JSON body is hashed in a canonical form (object keys sorted, no whitespace, every number as
// its source literal, so `1e3` and `1000` or two integers beyond 2^53 are not merged); a body that is not JSON is
// hashed as its bytes. Parsing is the lossless parser, bounded in depth: what it refuses is hashed raw.

/** `value` as canonical JSON: keys sorted by UTF-16 code units, no whitespace, numbers as written. */
export function canonicalJson(value: unknown): string {
  if (value instanceof JsonNumber) return value.literal;
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

const sha256 = (...parts: (string | Uint8Array)[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex");
};

/** SHA-256 (hex) of a request body: its canonical JSON, or its bytes when it is not JSON. An empty body is `""`. */
export function bodyFingerprint(bytes: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return sha256("raw\n", bytes);
  }
  if (text.trim() === "") return sha256("json\n", "");
  try {
    return sha256("json\n", canonicalJson(parseJsonLossless(text)));
  } catch {
    return sha256("raw\n", bytes);
  }
}

/** SHA-256 (hex) of already parsed arguments (a GraphQL field's), in the same canonical form. */
export const valueFingerprint = (value: unknown): string => sha256("json\n", canonicalJson(value));
