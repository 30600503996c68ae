import { describe, expect, it } from "vitest";
import { AMOUNT_NOT_POSITIVE, amountUnitsOf, tooManyDecimals } from "./validate-create.js";

// Issue 35: too many decimals for the token has its own message; every other bad amount keeps the spec's.
describe("amountUnitsOf", () => {
  it("reads a positive plain decimal at the token's decimals", () => {
    expect(amountUnitsOf("12.5", 6)).toBe(12_500_000n);
    expect(amountUnitsOf("1.000001", 6)).toBe(1_000_001n);
    expect(amountUnitsOf("7", 0)).toBe(7n);
  });

  it.each([
    ["1.0000001", 6, tooManyDecimals(6)],
    ["0.0000001", 6, tooManyDecimals(6)],
    ["1.5000000", 6, tooManyDecimals(6)],
    ["1.0000000000000000001", 18, tooManyDecimals(18)],
    ["1.5", 0, tooManyDecimals(0)],
    ["1.25", 1, tooManyDecimals(1)],
    ["0", 6, AMOUNT_NOT_POSITIVE],
    ["0.0000000", 6, AMOUNT_NOT_POSITIVE],
    ["-1.0000001", 6, AMOUNT_NOT_POSITIVE],
    [".5", 6, AMOUNT_NOT_POSITIVE],
    ["1e3", 6, AMOUNT_NOT_POSITIVE],
    [" 1.0000001", 6, AMOUNT_NOT_POSITIVE],
    ["1." + "1".repeat(80), 6, AMOUNT_NOT_POSITIVE],
    ["1" + "0".repeat(80), 6, AMOUNT_NOT_POSITIVE],
  ] as const)("%s at %i decimals -> %s", (amount, decimals, message) => {
    expect(() => amountUnitsOf(amount, decimals)).toThrow(message);
  });

  it("names the token's decimals, singular for one", () => {
    expect(tooManyDecimals(6)).toBe("Amount must have at most 6 decimal places");
    expect(tooManyDecimals(1)).toBe("Amount must have at most 1 decimal place");
  });
});
