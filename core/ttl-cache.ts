import { LRUCache } from "lru-cache";

/**
 * A bounded cache whose entries live `ttlMs` and load once however many callers ask at the same time
 * (lru-cache's `fetch`: concurrent callers share the pending load). An expired entry is never returned: the
 * caller waits for a fresh load. A load that throws is not cached, and `undefined` means "do not cache".
 * `ttlMs` 0 turns caching off (every call loads).
 *
 * @example
 * const prices = new TtlCache<bigint>({ max: 1000, ttlMs: 5_000 });
 * const wei = await prices.get("1:eth", () => readPrice());
 */
export class TtlCache<V extends object> {
  private readonly lru: LRUCache<string, V, () => Promise<V | undefined>> | null;

  constructor(opts: { max: number; ttlMs: number }) {
    this.lru =
      opts.ttlMs > 0
        ? new LRUCache({
            max: opts.max,
            ttl: opts.ttlMs,
            allowStale: false,
            // The TTL counts from when the load started (what it read may be that old), not from when it ended.
            fetchMethod: async (_key, _stale, { context, options }) => {
              const started = performance.now();
              const value = await context();
              options.ttl = Math.max(1, opts.ttlMs - (performance.now() - started));
              return value;
            },
          })
        : null;
  }

  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    return this.lru ? this.lru.fetch(key, { context: load }) : load();
  }

  delete(key: string): void {
    this.lru?.delete(key);
  }

  clear(): void {
    this.lru?.clear();
  }
}

/**
 * One cache per scope object (a deps' database or clients): two services in one process (tests) never share
 * entries, and a scope that is dropped takes its cache with it.
 *
 * @example
 * const keys = scopedCache<Merchant>(10_000);
 * await keys(deps.db, ttlMs).get(hash, () => lookup(hash));
 */
export function scopedCache<V extends object>(max: number) {
  const caches = new WeakMap<object, TtlCache<V>>();
  return (scope: object, ttlMs: number): TtlCache<V> => {
    let cache = caches.get(scope);
    if (!cache) caches.set(scope, (cache = new TtlCache<V>({ max, ttlMs })));
    return cache;
  };
}
