/** A seeded PRNG (mulberry32): the same seed gives the same scenario and fault plan. */
export type Rng = {
  seed: number;
  /** [0, 1) */
  next(): number;
  /** Integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** Bigint in [min, max] (inclusive). */
  big(min: bigint, max: bigint): bigint;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** Picks by weight: `[[value, weight], ...]`. */
  weighted<T>(items: readonly (readonly [T, number])[]): T;
  /** An independent stream for one concern, so adding draws elsewhere does not shift it. */
  fork(label: string): Rng;
};

export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng: Rng = {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    big(min, max) {
      const span = max - min + 1n;
      // 53 random bits at a time until the span is covered (no float rounding of large spans).
      let r = 0n;
      let cover = 1n;
      while (cover < span * 1024n) {
        r = r * 2n ** 32n + BigInt(Math.floor(next() * 2 ** 32));
        cover *= 2n ** 32n;
      }
      return min + (r % span);
    },
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)]!,
    weighted(items) {
      const total = items.reduce((s, [, w]) => s + w, 0);
      let x = next() * total;
      for (const [v, w] of items) if ((x -= w) < 0) return v;
      return items.at(-1)![0];
    },
    fork(label) {
      let h = seed >>> 0;
      for (const ch of label) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
      return createRng(h);
    },
  };
  return rng;
}

/** CHAOS_SEED when set (replay), else a fresh one. */
export function chaosSeed(env: Record<string, string | undefined> = process.env): number {
  const s = env.CHAOS_SEED;
  if (s !== undefined && s !== "") {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new Error(`CHAOS_SEED must be an integer 0..4294967295, got ${s}`);
    return n;
  }
  return Math.floor(Math.random() * 0xffffffff);
}
