/** The window the runway is estimated over: the spend of the last 7 days. */
export const RUNWAY_WINDOW_DAYS = 7n;

export type Runway =
  /** Nothing was spent in the window: no estimate. */
  | { kind: "no-spend" }
  /** The tank is empty or overdrawn while it is being spent. */
  | { kind: "empty"; dailySpendMicros: bigint }
  /** Whole days left at the window's average daily spend (floored; 0 = less than a day). */
  | { kind: "days"; days: bigint; dailySpendMicros: bigint };

/**
 * How long the Gas Tank lasts at the recent pace: days left = balance / (spend of the last 7 days / 7),
 * computed as floor(balance * 7 / spend) in bigint (no float, no rounding of the daily spend first).
 * `dailySpendMicros` (floored) is for display only.
 *
 * @example
 * runway(10_000_000n, 7_000_000n); // { kind: "days", days: 10n, dailySpendMicros: 1_000_000n }: 10 USDT at 1 USDT a day
 * runway(10_000_000n, 0n); // { kind: "no-spend" }
 */
export function runway(balanceMicros: bigint, spentInWindowMicros: bigint): Runway {
  if (spentInWindowMicros <= 0n) return { kind: "no-spend" };
  const dailySpendMicros = spentInWindowMicros / RUNWAY_WINDOW_DAYS;
  if (balanceMicros <= 0n) return { kind: "empty", dailySpendMicros };
  return { kind: "days", days: (balanceMicros * RUNWAY_WINDOW_DAYS) / spentInWindowMicros, dailySpendMicros };
}
