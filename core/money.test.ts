import { describe, expect, it } from "vitest";
import {
  decimalLiteralToFixed,
  formatAmount,
  formatPrice18,
  InvalidAmountError,
  MAX_UINT256,
  mulDivCeil,
  mulDivFloor,
  parseAmount,
  parsePositiveAmount,
  parsePrice18,
  tryParseAmount,
  tryParsePrice18,
  usd18ToMicrosCeil,
} from "./money.js";

describe("parseAmount", () => {
  it("parses exact decimals into smallest units", () => {
    expect(parseAmount("12.5", 6)).toBe(12_500_000n);
    expect(parseAmount("0.000001", 6)).toBe(1n);
    expect(parseAmount("1", 18)).toBe(10n ** 18n);
    expect(parseAmount("0", 6)).toBe(0n);
    expect(parseAmount("007.10", 2)).toBe(710n);
    expect(parseAmount(".5", 6)).toBe(500_000n);
    expect(parseAmount("5.", 6)).toBe(5_000_000n);
    expect(parseAmount("42", 0)).toBe(42n);
    expect(parseAmount("123456789012345678901234567890.123456789012345678", 18)).toBe(123456789012345678901234567890123456789012345678n);
  });

  it("accepts extra fraction digits only when they are zeros (no rounding ever)", () => {
    expect(parseAmount("1.500000000", 6)).toBe(1_500_000n);
    expect(() => parseAmount("1.0000001", 6)).toThrow(InvalidAmountError);
    expect(() => parseAmount("0.1", 0)).toThrow(InvalidAmountError);
    expect(parseAmount("3.000", 0)).toBe(3n);
  });

  it.each(["", ".", "-1", "+1", "1e6", "1E-6", " 1", "1 ", "0x10", "NaN", "Infinity", "1,000", "1.2.3", "١٢", "abc"])("rejects %j", (s) => {
    expect(() => parseAmount(s, 6)).toThrow(InvalidAmountError);
    expect(tryParseAmount(s, 6)).toBeNull();
  });

  it("rejects non-strings, values above uint256 and bad decimals", () => {
    expect(tryParseAmount(12.5, 6)).toBeNull();
    expect(tryParseAmount(null, 6)).toBeNull();
    expect(parseAmount(MAX_UINT256.toString(), 0)).toBe(MAX_UINT256);
    expect(() => parseAmount((MAX_UINT256 + 1n).toString(), 0)).toThrow(InvalidAmountError);
    expect(() => parseAmount("1", -1)).toThrow(RangeError);
    expect(() => parseAmount("1", 6.5)).toThrow(RangeError);
  });

  it("parsePositiveAmount requires > 0", () => {
    expect(parsePositiveAmount("0", 6)).toBeNull();
    expect(parsePositiveAmount("0.000", 6)).toBeNull();
    expect(parsePositiveAmount("0.000001", 6)).toBe(1n);
    expect(parsePositiveAmount("-1", 6)).toBeNull();
  });
});

describe("parseAmount strict (amounts callers send to the API)", () => {
  it.each([".5", "5.", "1.", "1.500000000", "1e3", " 1", "+1", "-1"])("refuses %j", (v) => {
    expect(tryParseAmount(v, 6, { strict: true })).toBeNull();
  });
  it("accepts plain decimals within the token's decimals", () => {
    expect(parseAmount("1.5", 6, { strict: true })).toBe(1_500_000n);
    expect(parseAmount("0.000001", 6, { strict: true })).toBe(1n);
    expect(parseAmount("12", 0, { strict: true })).toBe(12n);
  });
});

describe("formatAmount", () => {
  it("formats without trailing zeros", () => {
    expect(formatAmount(12_500_000n, 6)).toBe("12.5");
    expect(formatAmount(12_000_000n, 6)).toBe("12");
    expect(formatAmount(0n, 6)).toBe("0");
    expect(formatAmount(1n, 18)).toBe("0.000000000000000001");
    expect(formatAmount(42n, 0)).toBe("42");
    expect(formatAmount(-1_500_000n, 6)).toBe("-1.5");
    expect(formatAmount(-1n, 6)).toBe("-0.000001");
  });

  it("round-trips with parseAmount", () => {
    for (const [s, d] of [
      ["0.000012345678901234", 18],
      ["1", 6],
      ["999999999999.999999", 6],
      ["0.1", 1],
      [MAX_UINT256.toString(), 0],
    ] as const) {
      expect(formatAmount(parseAmount(s, d), d)).toBe(s);
    }
  });
});

describe("price18", () => {
  it("parses and formats 18-decimal prices exactly", () => {
    expect(parsePrice18("0.000012345678901234")).toBe(12345678901234n);
    expect(formatPrice18(12345678901234n)).toBe("0.000012345678901234");
    expect(parsePrice18("3000")).toBe(3000n * 10n ** 18n);
    expect(formatPrice18(parsePrice18("1.0001"))).toBe("1.0001");
    expect(() => parsePrice18("0.0000000000000000001")).toThrow(InvalidAmountError);
    expect(tryParsePrice18("1e3")).toBeNull();
  });
});

describe("mulDiv", () => {
  it("floors and ceils exactly", () => {
    expect(mulDivFloor(10n, 3n, 4n)).toBe(7n);
    expect(mulDivCeil(10n, 3n, 4n)).toBe(8n);
    expect(mulDivFloor(12n, 1n, 4n)).toBe(3n);
    expect(mulDivCeil(12n, 1n, 4n)).toBe(3n);
    expect(mulDivFloor(0n, 5n, 7n)).toBe(0n);
    expect(mulDivCeil(0n, 5n, 7n)).toBe(0n);
  });
  it("rounds toward -inf / +inf for negatives", () => {
    expect(mulDivFloor(-10n, 3n, 4n)).toBe(-8n);
    expect(mulDivCeil(-10n, 3n, 4n)).toBe(-7n);
    expect(mulDivFloor(10n, 3n, -4n)).toBe(-8n);
    expect(mulDivCeil(10n, 3n, -4n)).toBe(-7n);
    expect(mulDivFloor(-10n, 3n, -4n)).toBe(7n);
    expect(mulDivCeil(-10n, 3n, -4n)).toBe(8n);
  });
  it("handles values beyond 2^256 and rejects division by zero", () => {
    expect(mulDivFloor(MAX_UINT256, MAX_UINT256, MAX_UINT256)).toBe(MAX_UINT256);
    expect(() => mulDivCeil(1n, 1n, 0n)).toThrow(RangeError);
  });
});

describe("decimalLiteralToFixed", () => {
  it("converts JSON number literals exactly", () => {
    expect(decimalLiteralToFixed("1.0001", 18)).toBe(1_000_100_000_000_000_000n);
    expect(decimalLiteralToFixed("0.000012345678901234", 18)).toBe(12345678901234n);
    expect(decimalLiteralToFixed("1.2345e-7", 18)).toBe(123_450_000_000n);
    expect(decimalLiteralToFixed("1.2345E-7", 18)).toBe(123_450_000_000n);
    expect(decimalLiteralToFixed("3e3", 18)).toBe(3000n * 10n ** 18n);
    expect(decimalLiteralToFixed("3E+3", 6)).toBe(3_000_000_000n);
    expect(decimalLiteralToFixed("-0.5", 2)).toBe(-50n);
    expect(decimalLiteralToFixed("0", 18)).toBe(0n);
  });
  it("rounds digits beyond the scale as asked", () => {
    expect(decimalLiteralToFixed("0.1234567890123456789", 18, "floor")).toBe(123456789012345678n);
    expect(decimalLiteralToFixed("0.1234567890123456789", 18, "ceil")).toBe(123456789012345679n);
    expect(decimalLiteralToFixed("1e-19", 18)).toBe(0n);
    expect(decimalLiteralToFixed("1e-19", 18, "ceil")).toBe(1n);
  });
  it("rejects non-literals", () => {
    for (const s of ["", "abc", "1.", ".5", "0x1", "1e", "NaN", "1e99999"]) expect(decimalLiteralToFixed(s, 18)).toBeNull();
  });
});

describe("usd18ToMicrosCeil", () => {
  it("rounds up to the micro", () => {
    expect(usd18ToMicrosCeil(10n ** 17n)).toBe(100_000n);
    expect(usd18ToMicrosCeil(1n)).toBe(1n);
    expect(usd18ToMicrosCeil(10n ** 12n)).toBe(1n);
    expect(usd18ToMicrosCeil(10n ** 12n + 1n)).toBe(2n);
    expect(usd18ToMicrosCeil(0n)).toBe(0n);
  });
});

describe("formatAmount fixed", () => {
  it("keeps every decimal place", () => {
    expect(formatAmount(5_000_000n, 6, { fixed: true })).toBe("5.000000");
    expect(formatAmount(900_000n, 6, { fixed: true })).toBe("0.900000");
    expect(formatAmount(0n, 6, { fixed: true })).toBe("0.000000");
    expect(formatAmount(-1n, 6, { fixed: true })).toBe("-0.000001");
    expect(formatAmount(12n, 0, { fixed: true })).toBe("12");
  });
});
