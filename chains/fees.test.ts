import { parseGwei } from "viem";
import { describe, expect, it } from "vitest";
import { bump, initialFees, isStuck, replacementFees, type Market } from "./fees.js";
import type { FeeRule } from "./registry.js";

const g = (n: string) => parseGwei(n);
const rule: FeeRule = { minPriorityFeeGwei: 0, maxFeePerGasGwei: 100, blockTimeMs: 1000, replaceAfterBlocks: 3 };
const market = (baseFee: string, tip = "1", head = 100n): Market => ({ baseFee: g(baseFee), tip: g(tip), head });

describe("fees", () => {
  it("a first version leaves room for the base fee to double, with the suggested tip", () => {
    expect(initialFees(rule, market("10"))).toEqual({ maxFeePerGas: g("21"), maxPriorityFeePerGas: g("1") });
  });

  it("the chain's tip floor applies (Polygon's minimum tip)", () => {
    expect(initialFees({ ...rule, minPriorityFeeGwei: 30, maxFeePerGasGwei: 5000 }, market("10"))).toEqual({
      maxFeePerGas: g("50"),
      maxPriorityFeePerGas: g("30"),
    });
  });

  it("never above the cap", () => {
    expect(initialFees(rule, market("80"))).toEqual({ maxFeePerGas: g("100"), maxPriorityFeePerGas: g("1") });
  });

  it("a replacement raises both fees by at least 10%, and follows the base fee", () => {
    const prev = { maxFeePerGas: g("21"), maxPriorityFeePerGas: g("1") };
    // Base fee unchanged: +10% of each.
    expect(replacementFees(rule, prev, market("10"))).toEqual({ maxFeePerGas: bump(g("21")), maxPriorityFeePerGas: bump(g("1")) });
    expect(bump(g("21"))).toBe(g("23.1"));
    // Base fee tripled: what a first version would get now.
    expect(replacementFees(rule, prev, market("30"))).toEqual({ maxFeePerGas: g("61.1"), maxPriorityFeePerGas: g("1.1") });
  });

  it("up to the cap; a version the cap keeps from a 10% bump is not replaced", () => {
    const prev = { maxFeePerGas: g("21"), maxPriorityFeePerGas: g("1") };
    expect(replacementFees(rule, prev, market("60"))).toEqual({ maxFeePerGas: g("100"), maxPriorityFeePerGas: g("1.1") });
    expect(replacementFees(rule, { maxFeePerGas: g("95"), maxPriorityFeePerGas: g("1") }, market("60"))).toBeNull();
  });

  it("stuck: priced under the base fee, or waited the chain's blocks", () => {
    const v = { maxFeePerGas: g("21"), maxPriorityFeePerGas: g("1"), signedBlock: 99n };
    expect(isStuck(rule, v, market("10", "1", 100n))).toBe(false);
    expect(isStuck(rule, v, market("22", "1", 100n))).toBe(true);
    expect(isStuck(rule, v, market("10", "1", 102n))).toBe(true);
  });
});
