import { describe, expect, it } from "vitest";
import { BRIDGE_CANCEL_GAS_CAP, returnGasCap, SWEEP_GAS_PER_WALLET, sweepGasCap, TRANSFER_GAS_CAP } from "./gas-caps.js";

// The caps are the most the settler pays per operation: they must scale with a batch, stay above
// what an honest sweep costs (measured on Anvil, ~110-115 k a wallet) and far below what a hostile token burned (15.7 M).
describe("gas caps", () => {
  it("a sweep's cap is a base plus one share per wallet, so a batch of n may cost n wallets' gas", () => {
    expect(sweepGasCap(1)).toBe(60_000n + SWEEP_GAS_PER_WALLET);
    expect(sweepGasCap(50) - sweepGasCap(49)).toBe(SWEEP_GAS_PER_WALLET);
    expect(sweepGasCap(2, 150_000n)).toBe(360_000n);
    expect(returnGasCap()).toBe(sweepGasCap(1));
  });

  it("leaves room for an honest sweep and refuses the gas a hostile token burned", () => {
    expect(sweepGasCap(1)).toBeGreaterThan(2n * 115_000n);
    expect(sweepGasCap(1)).toBeLessThan(15_700_000n / 10n);
    expect(TRANSFER_GAS_CAP).toBeGreaterThan(65_000n);
    expect(BRIDGE_CANCEL_GAS_CAP).toBeLessThan(1_000_000n);
  });

  it("a full settlement batch at the default share fits one transaction's gas (16,777,216 since EIP-7825)", () => {
    expect(sweepGasCap(50)).toBeLessThanOrEqual(16_777_216n);
  });
});
