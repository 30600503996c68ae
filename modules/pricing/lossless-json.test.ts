import { describe, expect, it } from "vitest";
import { field, JsonNumber, parseJsonLossless } from "./lossless-json.js";

describe("parseJsonLossless", () => {
  it("keeps number literals verbatim", () => {
    const v = parseJsonLossless(`{ "0xabc": { "usd": 0.000012345678901234 }, "b": [1.2e-7, -3, 0], "c": 12345678901234567890.123 }`);
    expect((field(field(v, "0xabc"), "usd") as JsonNumber).literal).toBe("0.000012345678901234");
    expect((field(v, "b") as JsonNumber[]).map((n) => n.literal)).toEqual(["1.2e-7", "-3", "0"]);
    expect((field(v, "c") as JsonNumber).literal).toBe("12345678901234567890.123");
  });

  it("parses strings, escapes, literals and nesting", () => {
    const v = parseJsonLossless(`{"s":"a\\"b\\u00e9\\n","t":true,"f":false,"n":null,"o":{},"a":[]}`);
    expect(field(v, "s")).toBe('a"bé\n');
    expect(field(v, "t")).toBe(true);
    expect(field(v, "f")).toBe(false);
    expect(field(v, "n")).toBeNull();
    expect(field(v, "o")).toEqual({});
    expect(field(v, "a")).toEqual([]);
  });

  it("has no prototype keys", () => {
    const v = parseJsonLossless(`{"a":1}`);
    expect(field(v, "toString")).toBeUndefined();
    expect(field(v, "__proto__")).toBeUndefined();
    expect(field(parseJsonLossless(`{"__proto__":1}`), "__proto__")).toBeInstanceOf(JsonNumber);
  });

  it.each([``, `{`, `{"a":}`, `{"a":1,}`, `[1 2]`, `01`, `1.`, `.5`, `+1`, `NaN`, `{"a":1} x`, `"unterminated`, `{a:1}`, `[1,]`])(
    "rejects %j",
    (s) => {
      expect(() => parseJsonLossless(s)).toThrow(SyntaxError);
    },
  );

  it("rejects absurd nesting", () => {
    expect(() => parseJsonLossless("[".repeat(100) + "]".repeat(100))).toThrow(SyntaxError);
  });
});
