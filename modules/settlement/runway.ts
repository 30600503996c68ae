// How long a signer's native balance pays for its gas at the recent rate of spending: pure arithmetic, bigint only
// (signer-runway.ts reads the numbers; GET /api/health and /metrics show them).

/** The rate of spending is measured over the chain's last hour of blocks (registry `fees.blockTimeMs`). */
export const SPEND_WINDOW_MS = 3_600_000;
/**
 * The most recent transactions of one signer read per pass (an index range on (chain_id, signer, nonce) of each table):
 * the cost of a read does not grow with the history. A signer that sent more within the window is measured over the
 * blocks those span instead (spendRate).
 */
export const SPEND_SAMPLE = 500;

/**
 * The window in blocks: SPEND_WINDOW_MS of the chain's average block interval (at least 1).
 *
 * @example windowBlocksOf(12_000) // 300n on Ethereum; windowBlocksOf(2_000) // 1800n on Polygon
 */
export function windowBlocksOf(blockTimeMs: number): bigint {
  return BigInt(Math.max(1, Math.ceil(SPEND_WINDOW_MS / Math.max(1, blockTimeMs))));
}

/** What the spend query read of one signer's latest SPEND_SAMPLE transactions (signer-runway.ts). */
export type SpendSample = {
  /** Gas paid (gas used × effective gas price) by those that mined (or reverted) within the window, in wei. */
  spentWei: bigint;
  /** The earliest block of those (null: none in the window). */
  oldestBlock: bigint | null;
  /** One of them mined before the window: the sample reaches back over the whole window. */
  reachesBack: boolean;
  /** Transactions read (at most SPEND_SAMPLE). */
  count: number;
};

/** Wei spent over a number of blocks: the rate is `spentWei / blocks`, kept as a fraction. */
export type Spend = { spentWei: bigint; blocks: bigint };

/**
 * The spending rate of a signer at `head`: what it spent in the window over the window's blocks; when the sample is
 * full and does not reach back over the window (more transactions in it than read), over the blocks from the
 * earliest one read to the head instead (capped by the window). Nonces mine in order, so the sample, read by nonce
 * from the newest, holds every transaction of the signer mined since its earliest block.
 *
 * @example
 * spendRate({ spentWei: 9_000n, oldestBlock: 950n, reachesBack: true, count: 12 }, 1_000n, 300n); // { spentWei: 9000n, blocks: 300n }
 */
export function spendRate(sample: SpendSample, head: bigint, windowBlocks: bigint, sampleSize = SPEND_SAMPLE): Spend {
  const truncated = sample.count >= sampleSize && !sample.reachesBack && sample.oldestBlock !== null;
  if (!truncated) return { spentWei: sample.spentWei, blocks: windowBlocks };
  const spanned = head - sample.oldestBlock! + 1n;
  return { spentWei: sample.spentWei, blocks: spanned < 1n ? 1n : spanned > windowBlocks ? windowBlocks : spanned };
}

/**
 * Whole blocks the balance pays for at that rate: floor(balance × blocks / spent), in bigint (no float, no rounding of
 * the rate first). Null when nothing was spent (no rate: it lasts indefinitely); 0 when the balance is empty.
 *
 * @example
 * runwayBlocks(10n ** 18n, { spentWei: 10n ** 16n, blocks: 300n }); // 30000n: 1 ETH at 0.01 ETH per 300 blocks
 * runwayBlocks(10n ** 18n, { spentWei: 0n, blocks: 300n }); // null
 */
export function runwayBlocks(balanceWei: bigint, spend: Spend): bigint | null {
  if (spend.spentWei <= 0n) return null;
  if (balanceWei <= 0n) return 0n;
  return (balanceWei * spend.blocks) / spend.spentWei;
}

/**
 * Why a signer degrades GET /api/health on a chain, or null: its runway is under `minBlocks` (0: that check is off),
 * or its balance is zero while its transactions (or, for the settler, paid payments) wait. A balance that could not be
 * read says nothing here (the chain's RPC is its own component of health).
 *
 * @example
 * signerIssue({ signer: "0xAb…", balanceWei: 5n, runwayBlocks: 412n, pendingTransactions: 0 }, { minBlocks: 1000, unsettledPayments: 0 });
 * // "signer 0xAb… has gas for 412 blocks at the last hour's spending (bound 1000 blocks)"
 */
export function signerIssue(
  s: { signer: string; balanceWei: bigint | null; runwayBlocks: bigint | null; pendingTransactions: number },
  opts: { minBlocks: number; unsettledPayments: number },
): string | null {
  if (s.balanceWei === null) return null;
  if (s.balanceWei <= 0n && (s.pendingTransactions > 0 || opts.unsettledPayments > 0)) {
    const waits = [
      s.pendingTransactions > 0 && `${s.pendingTransactions} transaction(s)`,
      opts.unsettledPayments > 0 && `${opts.unsettledPayments} paid payment(s)`,
    ].filter(Boolean);
    return `signer ${s.signer} has no gas (balance 0) while ${waits.join(" and ")} wait`;
  }
  if (s.runwayBlocks !== null && opts.minBlocks > 0 && s.runwayBlocks < BigInt(opts.minBlocks))
    return `signer ${s.signer} has gas for ${s.runwayBlocks} blocks at the last hour's spending (bound ${opts.minBlocks} blocks)`;
  return null;
}
