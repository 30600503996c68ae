/** The two sizes of the chaos run: `small` inside `npm test`, `full` with CHAOS_SCALE=full. */
export const CHAOS_SCALES = {
  full: {
    payments: 300,
    merchants: 6,
    payers: 8,
    windowMs: 300_000,
    creationMs: 240_000,
    kills: { indexer: 3, processors: 4, api: 4 },
    gapMs: 8000,
    tank: "1000",
  },
  small: {
    payments: 30,
    merchants: 4,
    payers: 4,
    windowMs: 75_000,
    creationMs: 50_000,
    kills: { indexer: 1, processors: 2, api: 2 },
    gapMs: 5000,
    tank: "200",
  },
} as const;
