import type { ClientRateLimitInfo, Store } from "hono-rate-limiter";
import type { Db } from "../../db/client.js";
import type { AppDeps } from "../../core/deps.js";

/**
 * hono-rate-limiter store in Postgres: fixed one-window counters shared by every API replica,
 * so a limit holds for the service as a whole, not per process. One upsert per request.
 */
export class PostgresStore implements Store {
  private windowMs = 60_000;
  constructor(
    private db: Db,
    private now: () => number = Date.now,
  ) {}

  init(options: { windowMs: number }) {
    this.windowMs = options.windowMs;
  }

  private window() {
    const start = Math.floor(this.now() / this.windowMs) * this.windowMs;
    return { start: new Date(start), reset: new Date(start + this.windowMs) };
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const w = this.window();
    const { rows } = await this.db.pool.query(`SELECT hits FROM rate_limits WHERE key = $1 AND window_start = $2`, [key, w.start]);
    return rows[0] ? { totalHits: rows[0].hits, resetTime: w.reset } : undefined;
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const w = this.window();
    const { rows } = await this.db.pool.query(
      `INSERT INTO rate_limits (key, window_start, hits) VALUES ($1, $2, 1)
       ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limits.hits + 1 RETURNING hits`,
      [key, w.start],
    );
    // Old windows are useless: drop them now and then rather than on every request.
    if (Math.random() < 0.01)
      void this.db.pool
        .query(`DELETE FROM rate_limits WHERE window_start < $1`, [new Date(w.start.getTime() - this.windowMs)])
        .catch(() => {});
    return { totalHits: rows[0].hits, resetTime: w.reset };
  }

  async decrement(key: string): Promise<void> {
    await this.db.pool.query(`UPDATE rate_limits SET hits = GREATEST(hits - 1, 0) WHERE key = $1 AND window_start = $2`, [
      key,
      this.window().start,
    ]);
  }

  async resetKey(key: string): Promise<void> {
    await this.db.pool.query(`DELETE FROM rate_limits WHERE key = $1`, [key]);
  }
}

const stores = new WeakMap<AppDeps, PostgresStore>();

/** One store per app's dependencies (tests run several apps, each on its own schema). */
export function rateLimitStore(deps: AppDeps, windowMs = 60_000): PostgresStore {
  let store = stores.get(deps);
  if (!store) {
    store = new PostgresStore(deps.db, deps.now);
    store.init({ windowMs });
    stores.set(deps, store);
  }
  return store;
}
