import { describe, expect, it } from "vitest";
import { settlementBatchSize, SWEEP_GAS_PER_PAYMENT_BOUND, TX_GAS_CAP } from "./batch-size.js";

describe("settlementBatchSize", () => {
  it("fits a third of the block gas limit at the worst-case gas per payment, capped by the setting", () => {
    expect(SWEEP_GAS_PER_PAYMENT_BOUND).toBe(100_000n);
    expect(settlementBatchSize(30_000_000n, 50)).toBe(50); // 100 fit: the cap limits
    expect(settlementBatchSize(30_000_000n, 500)).toBe(100);
    expect(settlementBatchSize(15_000_000n, 50)).toBe(50);
    expect(settlementBatchSize(6_000_000n, 50)).toBe(20);
  });

  it("never exceeds the transaction gas cap, and is at least one", () => {
    expect(settlementBatchSize(140_000_000n, 1_000)).toBe(Number(TX_GAS_CAP / SWEEP_GAS_PER_PAYMENT_BOUND)); // 167
    expect(settlementBatchSize(200_000n, 50)).toBe(1);
    expect(settlementBatchSize(0n, 50)).toBe(1);
  });
});
