import { describe, expect, it } from "vitest";
import type { TransactionReceipt } from "viem";
import { gasTrueUpMicros, l1FeeOf } from "./gas-true-up.js";

const GWEI = 10n ** 9n;
const USD = 10n ** 18n;

describe("gasTrueUpMicros", () => {
  it("charges the payment's share of the mined gas at its effective price, less the quoted gas", () => {
    // 60,000 gas each at 30 gwei = 0.0018 ETH = 3.60 USD at 2,000 USD; quoted 0.05 USD.
    expect(
      gasTrueUpMicros({
        quotedGasUsd18: 5n * 10n ** 16n,
        gasUsed: 120_000n,
        batch: 2,
        effectiveGasPrice: 30n * GWEI,
        l1Fee: null,
        nativePriceUsd18: 2000n * USD,
      }),
    ).toBe(3_550_000n);
  });
  it("gives back what the quote held above the mined cost (negative), and nothing when they agree", () => {
    const q = { gasUsed: 100_000n, batch: 1, effectiveGasPrice: GWEI, l1Fee: null, nativePriceUsd18: 2000n * USD };
    // 100,000 gas at 1 gwei = 0.0001 ETH = 0.20 USD.
    expect(gasTrueUpMicros({ ...q, quotedGasUsd18: USD })).toBe(200_000n - 1_000_000n);
    expect(gasTrueUpMicros({ ...q, quotedGasUsd18: USD / 5n })).toBe(0n);
  });
  it("rounds each share up: an odd batch never charges less than the whole", () => {
    const q = { quotedGasUsd18: 0n, effectiveGasPrice: 1n, l1Fee: 3n, nativePriceUsd18: 10n ** 30n };
    // ceil(100,001 / 3) = 33,334 gas and ceil(3 / 3) = 1 wei of L1 fee, at 10^12 USD per ETH: 33,335 wei = 0.033335 USD.
    expect(gasTrueUpMicros({ ...q, gasUsed: 100_001n, batch: 3 })).toBe(33_335n);
  });
  it("adds the payment's share of an OP-stack L1 data fee", () => {
    const q = { quotedGasUsd18: 0n, gasUsed: 0n, batch: 2, effectiveGasPrice: 0n, nativePriceUsd18: 1000n * USD };
    // 2 * 10^12 wei of L1 fee for two payments: 10^12 wei each = 10^-6 ETH = 0.001 USD.
    expect(gasTrueUpMicros({ ...q, l1Fee: 2n * 10n ** 12n })).toBe(1_000n);
  });
});

describe("l1FeeOf", () => {
  const receipt = (extra: object) => ({ gasUsed: 1n, ...extra }) as unknown as TransactionReceipt;
  it("reads the receipt's l1Fee as an OP-stack node sends it (hex) or viem's OP formatter gives it (bigint)", () => {
    expect(l1FeeOf(receipt({ l1Fee: "0x10" }))).toBe(16n);
    expect(l1FeeOf(receipt({ l1Fee: 16n }))).toBe(16n);
  });
  it("is null where the chain reports none", () => {
    expect(l1FeeOf(receipt({}))).toBeNull();
    expect(l1FeeOf(receipt({ l1Fee: null }))).toBeNull();
  });
});
