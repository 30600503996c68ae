/**
 * Quotes remembered for a short while, so the same question (one payment, source, amount and payer) asked again, or by
 * many callers at once, asks the provider once (docs/bridge.md, "Provider budget"). Per process: with several API
 * replicas each may ask once per TTL; the service-wide budget (budget.ts) bounds the sum.
 *
 * A quote is served only while it is younger than the TTL, counted from before the provider was asked, and with its
 * age, so the payer page re-quotes when the quote (not its copy) is 30 s old: a cached quote is never older than a
 * fresh one the page would have accepted.
 */

/** How long a quote is served again. DLN expects the transaction within about 30 s of its quote. */
export const QUOTE_CACHE_TTL_MS = 15_000;
/** Entries kept at most (a flood of distinct questions evicts the oldest, it does not grow the process). */
export const QUOTE_CACHE_MAX = 10_000;

type Entry<T> = { at: number; value: Promise<T> };

export class QuoteCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly ttlMs = QUOTE_CACHE_TTL_MS,
    private readonly max = QUOTE_CACHE_MAX,
  ) {}

  /**
   * The value of `key` if it was asked for less than the TTL ago (concurrent callers share one `load`), else `load()`'s,
   * remembered from `now`. A failed load is forgotten. `at`: when the value was asked for.
   * @example const { value, at } = await cache.get(key, deps.now(), () => bridge.quote(req));
   */
  async get(key: string, now: number, load: () => Promise<T>): Promise<{ value: T; at: number }> {
    const hit = this.entries.get(key);
    if (hit && hit.at <= now && now - hit.at < this.ttlMs) return { value: await hit.value, at: hit.at };
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.evict(now);
    const entry: Entry<T> = { at: now, value: load() };
    this.entries.set(key, entry);
    entry.value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return { value: await entry.value, at: now };
  }

  get size(): number {
    return this.entries.size;
  }

  /** Drops expired entries, then the oldest until there is room (a Map iterates in insertion order). */
  private evict(now: number) {
    for (const [k, e] of this.entries) if (!(e.at <= now && now - e.at < this.ttlMs)) this.entries.delete(k);
    for (const k of this.entries.keys()) {
      if (this.entries.size < this.max) break;
      this.entries.delete(k);
    }
  }
}
