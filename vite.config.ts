// Read only by Ponder, which loads the indexer through a Vite server rooted here (vitest reads vitest.config.ts).
// Vite watches its whole root by default, `.data/` included: the embedded Postgres's files, which a running service
// creates and deletes by the thousand. The watcher re-listed those directories on every change and took the
// indexer's CPU for minutes (test runs: 75 blocks behind, the event loop in lstat). The indexer runs with
// `ponder start` only, which reloads nothing: no watcher.
export default {
  server: { watch: null },
};
