import { parseGwei } from "viem";
import { describe, expect, it } from "vitest";
import { bump, initialFees, isStuck, legacyFees, pricedOut, replacementFees, type Market } from "./fees.js";
import type { FeeRule } from "./registry.js";

const g = (n: string) => parseGwei(n);
const rule: FeeRule = { type: "eip1559", minPriorityFeeGwei: 0, maxFeePerGasGwei: 100, blockTimeMs: 1000, replaceAfterBlocks: 3 };
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

  it("priced out: under the base fee", () => {
    expect(pricedOut(rule, { maxFeePerGas: g("40"), maxPriorityFeePerGas: g("1") }, market("60"))).toBe(true);
    expect(pricedOut(rule, { maxFeePerGas: g("40"), maxPriorityFeePerGas: g("1") }, market("20"))).toBe(false);
  });
});

describe("fees on a chain without EIP-1559 (legacy gasPrice)", () => {
  // Polygon's tip floor is there to show it does not apply: a legacy chain's floor is `minGasPriceGwei`.
  const legacy: FeeRule = { ...rule, type: "legacy", minPriorityFeeGwei: 30 };
  /** No base fee (a pre-London chain) unless given; the node's eth_gasPrice. */
  const asks = (gasPrice: string, baseFee = "0", head = 100n): Market => ({ baseFee: g(baseFee), tip: 0n, gasPrice: g(gasPrice), head });

  it("a first version pays the node's gas price, stored as both fees; no tip floor", () => {
    expect(initialFees(legacy, asks("3"))).toEqual({ maxFeePerGas: g("3"), maxPriorityFeePerGas: g("3") });
    expect(legacyFees(g("3"))).toEqual(initialFees(legacy, asks("3")));
  });

  it("at least the chain's gas price floor when the rule sets one, never above the cap", () => {
    expect(initialFees({ ...legacy, minGasPriceGwei: 5 }, asks("3"))).toEqual(legacyFees(g("5")));
    expect(initialFees({ ...legacy, minGasPriceGwei: 5 }, asks("7"))).toEqual(legacyFees(g("7")));
    expect(initialFees(legacy, asks("150"))).toEqual(legacyFees(g("100")));
  });

  it("a replacement raises the gas price by at least 10%, and to at least the node's price now", () => {
    expect(replacementFees(legacy, legacyFees(g("2")), asks("2"))).toEqual(legacyFees(g("2.2")));
    // The node's price rose: it is followed.
    expect(replacementFees(legacy, legacyFees(g("2")), asks("5"))).toEqual(legacyFees(g("5")));
    // The floor too.
    expect(replacementFees({ ...legacy, minGasPriceGwei: 4 }, legacyFees(g("2")), asks("1"))).toEqual(legacyFees(g("4")));
  });

  it("up to the cap; a version the cap keeps from a 10% bump is not replaced (it waits)", () => {
    expect(replacementFees(legacy, legacyFees(g("80")), asks("150"))).toEqual(legacyFees(g("100")));
    expect(replacementFees(legacy, legacyFees(g("95")), asks("150"))).toBeNull();
    expect(replacementFees(legacy, legacyFees(g("100")), asks("1"))).toBeNull();
  });

  it("stuck: waited the chain's blocks, or under the base fee on a chain that has one", () => {
    const v = { ...legacyFees(g("2")), signedBlock: 99n };
    expect(isStuck(legacy, v, asks("2", "0", 101n))).toBe(false);
    // The node's price alone rising does not make it stuck before its blocks: a lower price may still be included.
    expect(isStuck(legacy, v, asks("9", "0", 101n))).toBe(false);
    expect(isStuck(legacy, v, asks("2", "0", 102n))).toBe(true);
    expect(isStuck(legacy, v, asks("3", "2.5", 100n))).toBe(true);
  });

  it("priced out at the cap: under the node's gas price (no base fee to fall below) or the base fee", () => {
    expect(pricedOut(legacy, legacyFees(g("100")), asks("150"))).toBe(true);
    expect(pricedOut(legacy, legacyFees(g("100")), asks("90"))).toBe(false);
    expect(pricedOut(legacy, legacyFees(g("100")), asks("90", "120"))).toBe(true);
  });
});
