// The recent-blockhash window of the local Solana (local/solana/svm.ts), kept apart from litesvm so it can be tested
// with a fake clock. Real Solana accepts a transaction whose blockhash is one of the last 150 blocks' (about 60 s at
// 400 ms a slot); litesvm alone accepts the latest one only, or any with its check off. Slots are derived from the
// clock when asked (no timer): a slot that passed unobserved mints no blockhash, the next look mints one.

export type BlockhashWindowOptions = {
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number;
  /** Length of a slot in ms; default 400 (Solana's target). */
  slotMs?: number;
  /** Slots a blockhash stays valid after the slot it was made in; default 150 (MAX_PROCESSING_AGE). */
  size?: number;
  /** Slot of the first blockhash; default 0. */
  startSlot?: number;
};

export type LatestBlockhash = {
  blockhash: string;
  /** The slot the blockhash was made in. */
  slot: number;
  /** The last block height (here: slot, every slot has a block) at which a transaction with it is accepted. */
  lastValidBlockHeight: number;
};

/**
 * Slots from the clock, one blockhash per observed slot, and which blockhashes are still recent.
 *
 *   const w = new BlockhashWindow(svm.latestBlockhash(), () => { svm.expireBlockhash(); return svm.latestBlockhash(); });
 *   w.latest(); // { blockhash, slot, lastValidBlockHeight: slot + 150 }
 *   w.isRecent(oldHash); // false once 150 slots have passed since it was made
 */
export class BlockhashWindow {
  readonly slotMs: number;
  readonly size: number;
  private readonly now: () => number;
  private readonly t0: number;
  private readonly startSlot: number;
  /** Slots added by advance() (a test or `local_advanceSlots` moving time on). */
  private skew = 0;
  private current: number;
  private latestHash: string;
  /** Blockhash → the slot it was made in; only those still recent (pruned on each new slot). */
  private readonly made = new Map<string, number>();

  /**
   * @param first the blockhash of the start slot
   * @param next makes the blockhash of a new slot (the slot is passed for a runtime's clock)
   */
  constructor(
    first: string,
    private readonly next: (slot: number) => string,
    opts: BlockhashWindowOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.slotMs = opts.slotMs ?? 400;
    this.size = opts.size ?? 150;
    this.startSlot = opts.startSlot ?? 0;
    this.t0 = this.now();
    this.current = this.startSlot;
    this.latestHash = first;
    this.made.set(first, this.current);
  }

  /** The current slot; moving into a new slot makes its blockhash and forgets those out of the window. */
  slot(): number {
    const s = this.startSlot + this.skew + Math.max(0, Math.floor((this.now() - this.t0) / this.slotMs));
    if (s > this.current) {
      this.current = s;
      this.latestHash = this.next(s);
      this.made.set(this.latestHash, s);
      for (const [hash, at] of this.made) if (at + this.size < s) this.made.delete(hash);
    }
    return this.current;
  }

  latest(): LatestBlockhash {
    this.slot();
    const slot = this.made.get(this.latestHash)!;
    return { blockhash: this.latestHash, slot, lastValidBlockHeight: slot + this.size };
  }

  /** Whether a transaction with this blockhash is accepted now. */
  isRecent(blockhash: string): boolean {
    return this.lastValidBlockHeight(blockhash) !== undefined;
  }

  /** The last valid block height of a recent blockhash, undefined for an unknown or expired one. */
  lastValidBlockHeight(blockhash: string): number | undefined {
    const now = this.slot();
    const at = this.made.get(blockhash);
    return at !== undefined && at + this.size >= now ? at + this.size : undefined;
  }

  /** Moves time on by `slots` slots at once (a blockhash is made for the slot reached, none for those between). */
  advance(slots: number): number {
    if (!Number.isInteger(slots) || slots < 0) throw new Error(`slots must be a whole number ≥ 0, got ${slots}`);
    this.skew += slots;
    return this.slot();
  }
}
