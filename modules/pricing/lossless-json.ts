/**
 * A small JSON parser that keeps every number as its source literal (JsonNumber), so a price such
 * as `0.000012345678901234` or `1.2345e-7` reaches the money code exactly, never through a float.
 * (Node 20's JSON.parse reviver has no access to the source text.) Strict RFC 8259 grammar;
 * throws SyntaxError on malformed input.
 */

export class JsonNumber {
  constructor(readonly literal: string) {}
  toString() {
    return this.literal;
  }
}

export type LosslessJson = null | boolean | string | JsonNumber | LosslessJson[] | { [key: string]: LosslessJson };

const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const MAX_DEPTH = 64;

export function parseJsonLossless(text: string): LosslessJson {
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`invalid JSON at ${i}: ${what}`);
  };
  const ws = () => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };
  const str = (): string => {
    // i at the opening quote; find the closing quote, then let JSON.parse decode escapes (strings carry no numbers).
    let j = i + 1;
    while (j < text.length) {
      const c = text.charCodeAt(j);
      if (c === 0x22) break;
      if (c === 0x5c) j += 2;
      else if (c < 0x20) fail("control character in string");
      else j++;
    }
    if (j >= text.length) fail("unterminated string");
    const s = JSON.parse(text.slice(i, j + 1)) as string;
    i = j + 1;
    return s;
  };
  const value = (depth: number): LosslessJson => {
    if (depth > MAX_DEPTH) fail("nesting too deep");
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const out: { [key: string]: LosslessJson } = Object.create(null);
      ws();
      if (text[i] === "}") {
        i++;
        return out;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("expected a key");
        const k = str();
        ws();
        if (text[i] !== ":") fail("expected ':'");
        i++;
        out[k] = value(depth + 1);
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return out;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const out: LosslessJson[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return out;
      }
      for (;;) {
        out.push(value(depth + 1));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return out;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    if (text.startsWith("true", i)) return (i += 4), true;
    if (text.startsWith("false", i)) return (i += 5), false;
    if (text.startsWith("null", i)) return (i += 4), null;
    NUMBER_RE.lastIndex = i;
    const m = NUMBER_RE.exec(text);
    if (!m || m[0].length === 0) fail("unexpected token");
    i += m![0].length;
    return new JsonNumber(m![0]);
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail("trailing characters");
  return v;
}

export function isJsonObject(v: LosslessJson | undefined): v is { [key: string]: LosslessJson } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber);
}

/** Own property of a parsed object (parsed objects have no prototype), undefined otherwise. */
export function field(v: LosslessJson | undefined, key: string): LosslessJson | undefined {
  return isJsonObject(v) && Object.prototype.hasOwnProperty.call(v, key) ? v[key] : undefined;
}
