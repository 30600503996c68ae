import { describe, expect, it } from "vitest";
import { computeFees, feeModeOf, gasFeeUsd18, PROCESSING_FEE_USD18, unitsToUsd18Ceil, usd18ToUnitsCeil, type FeeInput } from "./fees.js";
import { ONE_USD18, parseAmount, parsePrice18 } from "../../core/money.js";

const usdc = (s: string) => parseAmount(s, 6);
const base: FeeInput = {
  amountUnits: usdc("100"),
  decimals: 6,
  priceUsd18: ONE_USD18,
  platformFeeBps: 100,
  promo: false,
  gasFeeUsd18: parsePrice18("0.05"),
  mode: "gasTank",
};

describe("computeFees: stablecoin, 6 decimals", () => {
  it("Gas Tank mode: merchant gets the amount, the tank pays processing + gas + platform in USD", () => {
    const f = computeFees(base);
    expect(f.platformFeeUnits).toBe(1_000_000n);
    expect(f.processingFeeUnits).toBe(100_000n);
    expect(f.gasFeeUnits).toBe(50_000n);
    expect(f.totalFeeUnits).toBe(1_150_000n);
    expect(f.feePercentage).toBe(1);
    expect(f.platformFeeBps).toBe(100);
    expect(f.dueUnits).toBe(100_000_000n);
    expect(f.merchantReceivesUnits).toBe(100_000_000n);
    expect(f.gasTankFeeMicros).toBe(1_150_000n);
    expect(f.usd18).toEqual({
      platformFee: ONE_USD18,
      agentFee: 0n,
      processingFee: PROCESSING_FEE_USD18,
      gasFee: parsePrice18("0.05"),
      totalFee: parsePrice18("1.15"),
    });
    expect(f.feeExceedsAmount).toBe(false);
  });

  it("gasless mode: fees deducted from the payment", () => {
    const f = computeFees({ ...base, mode: "gasless" });
    expect(f.totalFeeUnits).toBe(1_150_000n);
    expect(f.dueUnits).toBe(100_000_000n);
    expect(f.merchantReceivesUnits).toBe(98_850_000n);
    expect(f.gasTankFeeMicros).toBe(0n);
  });

  it("payer-covers-fee mode: fees added on top", () => {
    const f = computeFees({ ...base, mode: "payerCoversFee" });
    expect(f.dueUnits).toBe(101_150_000n);
    expect(f.merchantReceivesUnits).toBe(100_000_000n);
    expect(f.gasTankFeeMicros).toBe(0n);
  });

  it("promotion waives only the platform fee", () => {
    const f = computeFees({ ...base, promo: true });
    expect(f.platformFeeUnits).toBe(0n);
    expect(f.feePercentage).toBe(0);
    expect(f.platformFeeBps).toBe(0);
    expect(f.processingFeeUnits).toBe(100_000n);
    expect(f.gasFeeUnits).toBe(50_000n);
    expect(f.gasTankFeeMicros).toBe(150_000n);
  });

  it("member (0 bps) and partner (25 bps) rates", () => {
    expect(computeFees({ ...base, platformFeeBps: 0 }).platformFeeUnits).toBe(0n);
    const p = computeFees({ ...base, platformFeeBps: 25 });
    expect(p.platformFeeUnits).toBe(250_000n);
    expect(p.feePercentage).toBe(0.25);
  });

  it("18-decimal stablecoin (USDT on chain 56)", () => {
    const f = computeFees({ ...base, decimals: 18, amountUnits: parseAmount("100", 18), mode: "gasless" });
    expect(f.platformFeeUnits).toBe(10n ** 18n);
    expect(f.processingFeeUnits).toBe(10n ** 17n);
    expect(f.gasFeeUnits).toBe(5n * 10n ** 16n);
    expect(f.merchantReceivesUnits).toBe(parseAmount("98.85", 18));
  });
});

describe("computeFees: priced tokens", () => {
  it("18-decimal token at 3000 USD, 25 bps, rounding every conversion up", () => {
    const f = computeFees({
      amountUnits: parseAmount("0.5", 18),
      decimals: 18,
      priceUsd18: parsePrice18("3000"),
      platformFeeBps: 25,
      promo: false,
      gasFeeUsd18: parsePrice18("0.123456789"),
      mode: "gasTank",
    });
    expect(f.platformFeeUnits).toBe(1_250_000_000_000_000n);
    // 0.10 / 3000 = 0.0000333... -> rounded up to the wei
    expect(f.processingFeeUnits).toBe(33_333_333_333_334n);
    expect(f.gasFeeUnits).toBe(41_152_263_000_000n);
    expect(f.totalFeeUnits).toBe(1_324_485_596_333_334n);
    expect(f.usd18.platformFee).toBe(parsePrice18("3.75"));
    // 3.75 + 0.10 + 0.123456789 = 3.973456789 USD -> 3.973457 USDT
    expect(f.gasTankFeeMicros).toBe(3_973_457n);
    expect(f.merchantReceivesUnits).toBe(parseAmount("0.5", 18));
  });

  it("6-decimal token at 0.25 USD (TRX)", () => {
    const f = computeFees({
      amountUnits: parseAmount("1000", 6),
      decimals: 6,
      priceUsd18: parsePrice18("0.25"),
      platformFeeBps: 100,
      promo: false,
      gasFeeUsd18: parsePrice18("0.01"),
      mode: "payerCoversFee",
    });
    expect(f.platformFeeUnits).toBe(10_000_000n);
    expect(f.processingFeeUnits).toBe(400_000n);
    expect(f.gasFeeUnits).toBe(40_000n);
    expect(f.dueUnits).toBe(1_010_440_000n);
  });

  it("very low price: fees above the amount are returned, not clamped", () => {
    const price = parsePrice18("0.000012345678901234");
    const f = computeFees({
      amountUnits: parseAmount("1000", 18),
      decimals: 18,
      priceUsd18: price,
      platformFeeBps: 100,
      promo: false,
      gasFeeUsd18: 0n,
      mode: "gasless",
    });
    expect(f.platformFeeUnits).toBe(10n ** 19n);
    expect(f.processingFeeUnits).toBe(8_100_000_072_900_373_256_107n);
    expect(f.totalFeeUnits).toBe(8_110_000_072_900_373_256_107n);
    expect(f.merchantReceivesUnits).toBe(-7_110_000_072_900_373_256_107n);
    expect(f.feeExceedsAmount).toBe(true);
    const tank = computeFees({
      amountUnits: parseAmount("1000", 18),
      decimals: 18,
      priceUsd18: price,
      platformFeeBps: 100,
      promo: false,
      gasFeeUsd18: 0n,
      mode: "gasTank",
    });
    expect(tank.usd18.platformFee).toBe(123_456_789_012_340n);
    expect(tank.gasTankFeeMicros).toBe(100_124n);
  });

  it("platform fee rounds up to the smallest unit", () => {
    const f = (amountUnits: bigint) => computeFees({ ...base, amountUnits, gasFeeUsd18: 0n }).platformFeeUnits;
    expect(f(1n)).toBe(1n);
    expect(f(100n)).toBe(1n);
    expect(f(101n)).toBe(2n);
    expect(f(199n)).toBe(2n);
    expect(f(0n)).toBe(0n);
  });

  it("rejects invalid inputs", () => {
    expect(() => computeFees({ ...base, priceUsd18: 0n })).toThrow(RangeError);
    expect(() => computeFees({ ...base, amountUnits: -1n })).toThrow(RangeError);
    expect(() => computeFees({ ...base, platformFeeBps: 10.5 })).toThrow(RangeError);
    expect(() => computeFees({ ...base, platformFeeBps: -1 })).toThrow(RangeError);
    expect(() => computeFees({ ...base, gasFeeUsd18: -1n })).toThrow(RangeError);
    expect(() => computeFees({ ...base, mode: "other" as never })).toThrow(RangeError);
  });
});

describe("agent markup", () => {
  const base: FeeInput = {
    amountUnits: 100_000_000n, // 100 USDC
    decimals: 6,
    priceUsd18: ONE_USD18,
    platformFeeBps: 100,
    agentFeeBps: 37,
    promo: false,
    gasFeeUsd18: parsePrice18("0.05"),
    mode: "gasTank",
  };

  it("is a percentage of the amount like the platform fee, inside the total in every mode", () => {
    for (const mode of ["gasTank", "gasless", "payerCoversFee"] as const) {
      const f = computeFees({ ...base, mode });
      expect(f.agentFeeBps).toBe(37);
      expect(f.agentFeeUnits).toBe(370_000n);
      expect(f.totalFeeUnits).toBe(1_000_000n + 370_000n + 100_000n + 50_000n);
      expect(f.usd18.agentFee).toBe(parsePrice18("0.37"));
      expect(f.usd18.totalFee).toBe(parsePrice18("1.52"));
      expect(f.dueUnits).toBe(mode === "payerCoversFee" ? 101_520_000n : 100_000_000n);
      expect(f.merchantReceivesUnits).toBe(mode === "gasless" ? 98_480_000n : 100_000_000n);
      expect(f.gasTankFeeMicros).toBe(mode === "gasTank" ? 1_520_000n : 0n);
    }
  });

  it("rounds up to the smallest unit, and is waived with the platform fee under the promotion", () => {
    expect(computeFees({ ...base, amountUnits: 1n }).agentFeeUnits).toBe(1n);
    const promo = computeFees({ ...base, promo: true, mode: "gasless" });
    expect([promo.platformFeeUnits, promo.agentFeeUnits, promo.agentFeeBps]).toEqual([0n, 0n, 0]);
    expect(promo.totalFeeUnits).toBe(150_000n);
  });

  it("refuses a markup outside 0-10000 bps", () => {
    expect(() => computeFees({ ...base, agentFeeBps: -1 })).toThrow(RangeError);
    expect(() => computeFees({ ...base, agentFeeBps: 10_001 })).toThrow(RangeError);
    expect(() => computeFees({ ...base, agentFeeBps: 1.5 })).toThrow(RangeError);
  });
});

describe("helpers", () => {
  it("gasFeeUsd18 = gasUnits * gasPrice * native price, rounded up", () => {
    // 150k gas at 30 gwei = 0.0045 native; at 0.5 USD = 0.00225 USD
    expect(gasFeeUsd18({ gasUnits: 150_000n, gasPriceWei: 30_000_000_000n, nativePriceUsd18: parsePrice18("0.5") })).toBe(
      parsePrice18("0.00225"),
    );
    expect(gasFeeUsd18({ gasUnits: 1n, gasPriceWei: 1n, nativePriceUsd18: 1n })).toBe(1n);
    expect(gasFeeUsd18({ gasUnits: 0n, gasPriceWei: 1n, nativePriceUsd18: ONE_USD18 })).toBe(0n);
    expect(() => gasFeeUsd18({ gasUnits: -1n, gasPriceWei: 1n, nativePriceUsd18: 1n })).toThrow(RangeError);
    // An OP-stack chain's L1 data fee (wei) is added before the conversion: 150k gas at 0.01 gwei + 0.00005 ETH of L1
    // fee, ETH at 3000 USD: (1.5e12 + 5e13) wei = 5.15e13 wei = 0.1545 USD.
    expect(
      gasFeeUsd18({ gasUnits: 150_000n, gasPriceWei: 10_000_000n, nativePriceUsd18: parsePrice18("3000"), l1FeeWei: 50_000_000_000_000n }),
    ).toBe(parsePrice18("0.1545"));
    expect(() => gasFeeUsd18({ gasUnits: 1n, gasPriceWei: 1n, nativePriceUsd18: 1n, l1FeeWei: -1n })).toThrow(RangeError);
  });

  it("conversions between USD and units", () => {
    expect(usd18ToUnitsCeil(PROCESSING_FEE_USD18, 6, ONE_USD18)).toBe(100_000n);
    expect(usd18ToUnitsCeil(1n, 6, ONE_USD18)).toBe(1n);
    expect(unitsToUsd18Ceil(1n, 6, ONE_USD18)).toBe(10n ** 12n);
    expect(() => usd18ToUnitsCeil(1n, 6, 0n)).toThrow(RangeError);
  });

  it("feeModeOf", () => {
    expect(feeModeOf({ gasless: false, payerCoversFee: false })).toBe("gasTank");
    expect(feeModeOf({ gasless: true, payerCoversFee: false })).toBe("gasless");
    expect(feeModeOf({ gasless: false, payerCoversFee: true })).toBe("payerCoversFee");
    expect(feeModeOf({ gasless: true, payerCoversFee: true })).toBe("payerCoversFee");
  });
});
