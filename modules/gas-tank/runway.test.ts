import { describe, expect, it } from "vitest";
import { runway } from "./runway.js";

describe("Gas Tank runway", () => {
  it("days left = balance / (7-day spend / 7), floored, exact in bigint", () => {
    expect(runway(10_000_000n, 7_000_000n)).toEqual({ kind: "days", days: 10n, dailySpendMicros: 1_000_000n });
    // 1 USDT spent in 7 days, 0.5 USDT left: 3.5 days -> 3.
    expect(runway(500_000n, 1_000_000n)).toEqual({ kind: "days", days: 3n, dailySpendMicros: 142_857n });
    // Less than a day's spend left.
    expect(runway(1n, 7_000_000n)).toEqual({ kind: "days", days: 0n, dailySpendMicros: 1_000_000n });
    // Far beyond a float's exact range: still exact.
    const big = 10n ** 40n + 1n;
    expect(runway(big * 3n, 7n * big)).toEqual({ kind: "days", days: 3n, dailySpendMicros: big });
    // A spend of 1 micro in 7 days: the daily spend floors to 0, the days do not divide by it.
    expect(runway(1_000_000n, 1n)).toEqual({ kind: "days", days: 7_000_000n, dailySpendMicros: 0n });
  });

  it("no spend in the window gives no estimate; an empty tank that is spent gives `empty`", () => {
    expect(runway(10_000_000n, 0n)).toEqual({ kind: "no-spend" });
    // Refunds above fees (a net gain) are no spend either.
    expect(runway(10_000_000n, -5n)).toEqual({ kind: "no-spend" });
    expect(runway(0n, 7_000_000n)).toEqual({ kind: "empty", dailySpendMicros: 1_000_000n });
    expect(runway(-3n, 7_000_000n)).toEqual({ kind: "empty", dailySpendMicros: 1_000_000n });
  });
});
