import { describe, expect, it } from "vitest";
import { runwayBlocks, signerIssue, SPEND_SAMPLE, spendRate, windowBlocksOf } from "./runway.js";

const ETH = 10n ** 18n;
const GWEI = 10n ** 9n;

describe("windowBlocksOf: one hour of the chain's blocks", () => {
  it("divides the hour by the block interval, rounding up, at least one block", () => {
    expect(windowBlocksOf(12_000)).toBe(300n); // Ethereum
    expect(windowBlocksOf(2_000)).toBe(1_800n); // Polygon
    expect(windowBlocksOf(250)).toBe(14_400n); // Arbitrum
    expect(windowBlocksOf(7_000)).toBe(515n); // 514.28… rounded up
    expect(windowBlocksOf(0)).toBe(3_600_000n); // a nonsense interval does not divide by zero
    expect(windowBlocksOf(10_000_000)).toBe(1n);
  });
});

describe("spendRate", () => {
  const sample = { spentWei: 9_000n, oldestBlock: 950n, reachesBack: true, count: 12 };

  it("a sample that reaches back over the window (or holds the signer's whole history): the window's blocks", () => {
    expect(spendRate(sample, 1_000n, 300n)).toEqual({ spentWei: 9_000n, blocks: 300n });
    expect(spendRate({ ...sample, reachesBack: false }, 1_000n, 300n)).toEqual({ spentWei: 9_000n, blocks: 300n });
    expect(spendRate({ spentWei: 0n, oldestBlock: null, reachesBack: false, count: 0 }, 1_000n, 300n)).toEqual({
      spentWei: 0n,
      blocks: 300n,
    });
  });

  it("a full sample all within the window: the blocks from its earliest to the head", () => {
    const full = { spentWei: 5_000n, oldestBlock: 901n, reachesBack: false, count: SPEND_SAMPLE };
    expect(spendRate(full, 1_000n, 300n)).toEqual({ spentWei: 5_000n, blocks: 100n }); // blocks 901..1000
    expect(spendRate({ ...full, oldestBlock: 1_000n }, 1_000n, 300n).blocks).toBe(1n); // all in the head block
    expect(spendRate({ ...full, oldestBlock: 1_001n }, 1_000n, 300n).blocks).toBe(1n); // a head read before the rows: never 0
    expect(spendRate({ ...full, oldestBlock: 1n }, 1_000n, 300n).blocks).toBe(300n); // never more than the window
    // Full but reaching back: the window is covered.
    expect(spendRate({ ...full, reachesBack: true }, 1_000n, 300n).blocks).toBe(300n);
  });
});

describe("runwayBlocks: floor(balance × blocks / spent), in bigint", () => {
  it("blocks the balance pays for at the window's rate", () => {
    expect(runwayBlocks(ETH, { spentWei: ETH / 100n, blocks: 300n })).toBe(30_000n); // 1 ETH at 0.01 ETH per 300 blocks
    expect(runwayBlocks(10n, { spentWei: 3n, blocks: 1n })).toBe(3n); // floored, not rounded
    expect(runwayBlocks(2n, { spentWei: 3n, blocks: 1n })).toBe(0n); // less than one block left
  });

  it("nothing spent: null (no rate, it lasts indefinitely); an empty balance while spending: 0", () => {
    expect(runwayBlocks(ETH, { spentWei: 0n, blocks: 300n })).toBeNull();
    expect(runwayBlocks(0n, { spentWei: 0n, blocks: 300n })).toBeNull();
    expect(runwayBlocks(0n, { spentWei: 1n, blocks: 300n })).toBe(0n);
    expect(runwayBlocks(-5n, { spentWei: 1n, blocks: 300n })).toBe(0n);
  });

  it("exact past a float's 53 bits: whale balances and wei-level spend", () => {
    // 10 million ETH over 1 wei per 14,400 blocks: 1.44e29 blocks, which a double would round.
    const balance = 10_000_000n * ETH + 1n;
    expect(runwayBlocks(balance, { spentWei: 1n, blocks: 14_400n })).toBe(balance * 14_400n);
    expect(BigInt(Number(balance) * 14_400)).not.toBe(balance * 14_400n); // what floats would have answered
    // A realistic settler: 0.75 ETH, 40 sweeps of 150,000 gas at 32.5 gwei over Ethereum's 300 blocks.
    const spent = 40n * 150_000n * ((325n * GWEI) / 10n);
    expect(spent).toBe(195_000_000_000_000_000n); // 0.195 ETH
    expect(runwayBlocks((75n * ETH) / 100n, { spentWei: spent, blocks: 300n })).toBe(1_153n); // 1153.8…
  });
});

describe("signerIssue", () => {
  const s = { signer: "0x000000000000000000000000000000000000dEaD", balanceWei: ETH, runwayBlocks: 5_000n, pendingTransactions: 0 };
  const opts = { minBlocks: 1_000, unsettledPayments: 0 };

  it("none while the runway is at or over the bound, or unknown", () => {
    expect(signerIssue(s, opts)).toBeNull();
    expect(signerIssue({ ...s, runwayBlocks: 1_000n }, opts)).toBeNull();
    expect(signerIssue({ ...s, runwayBlocks: null }, opts)).toBeNull();
    expect(signerIssue({ ...s, balanceWei: null, runwayBlocks: 3n }, opts)).toBeNull(); // unread: the chain's RPC is its own issue
  });

  it("a runway under the bound names the signer, its blocks and the bound; 0 turns the check off", () => {
    expect(signerIssue({ ...s, runwayBlocks: 412n }, opts)).toBe(
      "signer 0x000000000000000000000000000000000000dEaD has gas for 412 blocks at the last hour's spending (bound 1000 blocks)",
    );
    expect(signerIssue({ ...s, runwayBlocks: 412n }, { ...opts, minBlocks: 0 })).toBeNull();
  });

  it("a zero balance degrades while its transactions or paid payments wait, whatever the runway; idle, it does not", () => {
    const empty = { ...s, balanceWei: 0n, runwayBlocks: null };
    expect(signerIssue(empty, opts)).toBeNull();
    expect(signerIssue({ ...empty, pendingTransactions: 2 }, { ...opts, minBlocks: 0 })).toBe(
      "signer 0x000000000000000000000000000000000000dEaD has no gas (balance 0) while 2 transaction(s) wait",
    );
    expect(signerIssue({ ...empty, pendingTransactions: 1 }, { ...opts, unsettledPayments: 3 })).toBe(
      "signer 0x000000000000000000000000000000000000dEaD has no gas (balance 0) while 1 transaction(s) and 3 paid payment(s) wait",
    );
    expect(signerIssue({ ...empty, runwayBlocks: 0n }, { ...opts, unsettledPayments: 3 })).toMatch(/no gas \(balance 0\) while 3 paid/);
    // Spending, empty, nothing waiting (just mined the last): the runway check says so.
    expect(signerIssue({ ...empty, runwayBlocks: 0n }, opts)).toMatch(/has gas for 0 blocks/);
  });
});
