import { describe, expect, it } from "vitest";
import { isPartialPayment, paidThreshold, shortfallUnits, underpaymentToleranceUnits, type ToleranceInput } from "./tolerance.js";
import { MAX_TOLERANCE_BPS } from "../merchants/index.js";

const usdt = 1_000_000n; // 6 decimals
const base: ToleranceInput = { dueUnits: 10n * usdt, bps: 0, absoluteUnits: 0n, walletFeeUnits: 0n };
const tol = (over: Partial<ToleranceInput>) => underpaymentToleranceUnits({ ...base, ...over });

describe("underpaymentToleranceUnits", () => {
  it("is 0 by default: the spec's behaviour, the full amount is due", () => {
    expect(tol({})).toBe(0n);
    expect(paidThreshold(10n * usdt, tol({}))).toBe(10n * usdt);
  });

  it("takes bps of the amount due: 50 bps of 10 USDT is 0.05 USDT, so 9.97 is paid and 9.94 is not", () => {
    const t = tol({ bps: 50 });
    expect(t).toBe(50_000n);
    const threshold = paidThreshold(10n * usdt, t);
    expect(threshold).toBe(9_950_000n);
    expect(9_970_000n >= threshold).toBe(true);
    expect(9_940_000n >= threshold).toBe(false);
    // Exactly at the tolerance counts; one unit beyond it does not.
    expect(9_950_000n >= threshold).toBe(true);
    expect(9_949_999n >= threshold).toBe(false);
  });

  it("rounds the bps share DOWN to the smallest unit, never accepting more shortfall than configured", () => {
    // 1 bps of 9.999999 USDT = 0.0009999999 -> 999 units (not 1000).
    expect(tol({ dueUnits: 9_999_999n, bps: 1 })).toBe(999n);
    // 33 bps of 1 unit-odd amounts: floor(1_234_567 * 33 / 10000) = floor(4074.0711) = 4074.
    expect(tol({ dueUnits: 1_234_567n, bps: 33 })).toBe(4074n);
    // Below one unit: nothing.
    expect(tol({ dueUnits: 199n, bps: 50 })).toBe(0n);
    expect(tol({ dueUnits: 200n, bps: 50 })).toBe(1n);
    // 18 decimals, exact in bigint far beyond 2^53.
    const due = 123_456_789_012_345_678_901n;
    expect(tol({ dueUnits: due, bps: 7 })).toBe((due * 7n) / 10_000n);
    expect(tol({ dueUnits: due, bps: 7 })).toBe(86_419_752_308_641_975n);
  });

  it("an absolute amount accepts a flat shortfall; with both set the larger applies", () => {
    expect(tol({ absoluteUnits: 1n * usdt })).toBe(1n * usdt);
    expect(tol({ bps: 50, absoluteUnits: 10_000n })).toBe(50_000n);
    expect(tol({ bps: 50, absoluteUnits: 80_000n })).toBe(80_000n);
  });

  it("what must arrive always covers the fees taken from the wallet, plus one unit for the merchant", () => {
    // Gasless 1 USDT with a 0.10 fee and a 2 USDT absolute tolerance: at most 0.899999 short, so >= 0.100001 arrives.
    expect(tol({ dueUnits: 1n * usdt, absoluteUnits: 2n * usdt, walletFeeUnits: 100_000n })).toBe(899_999n);
    expect(paidThreshold(1n * usdt, 899_999n)).toBe(100_001n);
    // Gas Tank mode (no wallet fee): at least one unit must arrive.
    expect(tol({ dueUnits: 1n * usdt, absoluteUnits: 5n * usdt })).toBe(999_999n);
    // Fees at or above the amount due (a gasless payment that will fail anyway): no tolerance at all.
    expect(tol({ dueUnits: 50_000n, bps: 500, absoluteUnits: 10_000n, walletFeeUnits: 100_000n })).toBe(0n);
    expect(tol({ dueUnits: 100_001n, bps: 500, walletFeeUnits: 100_000n })).toBe(0n);
    expect(tol({ dueUnits: 100_002n, bps: 500, walletFeeUnits: 100_000n })).toBe(1n);
    // A small tolerance is not touched by the cap.
    expect(tol({ bps: 50, walletFeeUnits: 100_000n })).toBe(50_000n);
  });

  it("refuses bps outside 0..500 and negative inputs", () => {
    expect(MAX_TOLERANCE_BPS).toBe(500);
    expect(tol({ bps: 500 })).toBe(500_000n);
    for (const bps of [-1, 501, 1.5, Number.NaN]) expect(() => tol({ bps }), String(bps)).toThrow(RangeError);
    expect(() => tol({ absoluteUnits: -1n })).toThrow(RangeError);
    expect(() => tol({ dueUnits: -1n })).toThrow(RangeError);
  });
});

describe("shortfallUnits", () => {
  it("is due - received when short, 0 when paid in full or over", () => {
    expect(shortfallUnits(9_970_000n, 10n * usdt)).toBe(30_000n);
    expect(shortfallUnits(10n * usdt, 10n * usdt)).toBe(0n);
    expect(shortfallUnits(11n * usdt, 10n * usdt)).toBe(0n);
  });
});

describe("isPartialPayment (what may be withdrawn)", () => {
  it("is something received below the paid threshold: a payment within its tolerance is not partial", () => {
    // 10 USDT due, 0.05 tolerance: 9.95 is paid, 9.949999 is partial.
    expect(isPartialPayment(9_949_999n, 10n * usdt, 50_000n)).toBe(true);
    expect(isPartialPayment(9_950_000n, 10n * usdt, 50_000n)).toBe(false);
    expect(isPartialPayment(9_970_000n, 10n * usdt, 50_000n)).toBe(false);
    expect(isPartialPayment(0n, 10n * usdt, 50_000n)).toBe(false);
    // Without a tolerance: the spec's rule, 0 < received < due.
    expect(isPartialPayment(1n, 10n * usdt, 0n)).toBe(true);
    expect(isPartialPayment(9_999_999n, 10n * usdt, 0n)).toBe(true);
    expect(isPartialPayment(10n * usdt, 10n * usdt, 0n)).toBe(false);
    expect(isPartialPayment(11n * usdt, 10n * usdt, 0n)).toBe(false);
  });
});
