import { parse } from "lossless-json";

/**
 * JSON with every number kept as its source literal (JsonNumber), so a price such as
 * `0.000012345678901234` or `1.2345e-7` reaches the money code exactly, never through a float.
 * Parsing is the `lossless-json` package (strict RFC 8259; a repeated key keeps its last value, as
 * JSON.parse does); this module adds the number type, a nesting bound and own-property access.
 */
export class JsonNumber {
  constructor(readonly literal: string) {}
  toString() {
    return this.literal;
  }
}

export type LosslessJson = null | boolean | string | JsonNumber | LosslessJson[] | { [key: string]: LosslessJson };

const MAX_DEPTH = 64;

function depth(v: LosslessJson, d = 0): number {
  if (d > MAX_DEPTH || typeof v !== "object" || v === null || v instanceof JsonNumber) return d;
  let max = d;
  for (const x of Array.isArray(v) ? v : Object.values(v)) max = Math.max(max, depth(x, d + 1));
  return max;
}

/** Parses `text`; throws SyntaxError on malformed input or nesting deeper than 64. */
export function parseJsonLossless(text: string): LosslessJson {
  let v: LosslessJson;
  try {
    v = parse(text, null, {
      parseNumber: (literal) => new JsonNumber(literal),
      onDuplicateKey: ({ newValue }) => newValue,
    }) as LosslessJson;
  } catch (e) {
    throw e instanceof SyntaxError ? e : new SyntaxError(`invalid JSON: ${(e as Error).message}`);
  }
  if (depth(v) > MAX_DEPTH) throw new SyntaxError("invalid JSON: nesting too deep");
  return v;
}

export function isJsonObject(v: LosslessJson | undefined): v is { [key: string]: LosslessJson } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber);
}

/** Own property of a parsed object (never one inherited, such as `toString`), undefined otherwise. */
export function field(v: LosslessJson | undefined, key: string): LosslessJson | undefined {
  return isJsonObject(v) && Object.prototype.hasOwnProperty.call(v, key) ? v[key] : undefined;
}
