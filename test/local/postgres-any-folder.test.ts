import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { isAlive } from "../../local/child.js";
import { startEmbeddedPostgres, stopStalePostmaster } from "../../local/postgres.js";
import { packageBinaries, placePostgres, RUNTIME_DIR, sweepRuntimeDir } from "../../local/postgres-placement.js";

// Issue 10, item 8: a checkout in a folder only root may enter (root's home is mode 700). As root,
// Postgres runs as the `postgres` user, which could reach neither the binaries nor the data dir.
const root = process.getuid?.() === 0;

async function query(url: string, sql: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

let closed: string | undefined;
/** A folder like root's home: mode 700, closed to the postgres user. */
function closedFolder(): string {
  closed = fs.mkdtempSync(path.join(os.tmpdir(), "chainpay-closed-"));
  expect(fs.statSync(closed).mode & 0o777).toBe(0o700);
  return closed;
}
afterEach(async () => {
  if (closed) fs.rmSync(closed, { recursive: true, force: true });
  closed = undefined;
  await sweepRuntimeDir();
});

describe.skipIf(!root)("embedded Postgres in a folder the postgres user cannot enter", () => {
  it("starts with its cluster outside that folder, and a test run's cluster is gone after stop", async () => {
    const dataDir = path.join(closedFolder(), ".data", "postgres");
    const pgs = await startEmbeddedPostgres({ dataDir, persistent: false, fresh: true });
    const [{ dir }] = await query(pgs.url, "SELECT current_setting('data_directory') AS dir");
    expect(dir.startsWith(RUNTIME_DIR + path.sep)).toBe(true);
    expect(fs.readlinkSync(dataDir)).toBe(dir);
    await pgs.stop();
    expect(fs.existsSync(path.dirname(dir))).toBe(false);
    expect(fs.lstatSync(dataDir, { throwIfNoEntry: false })).toBeUndefined();
  });

  it("keeps the dev cluster across restarts, and deleting .data starts afresh", async () => {
    const dataDir = path.join(closedFolder(), ".data", "postgres");
    let pgs = await startEmbeddedPostgres({ dataDir });
    await query(pgs.url, "CREATE TABLE kept (n int)");
    await pgs.stop();
    pgs = await startEmbeddedPostgres({ dataDir });
    expect(await query(pgs.url, "SELECT to_regclass('kept') AS t")).toEqual([{ t: "kept" }]);
    await pgs.stop();

    fs.rmSync(path.dirname(dataDir), { recursive: true });
    pgs = await startEmbeddedPostgres({ dataDir, persistent: false });
    expect(await query(pgs.url, "SELECT to_regclass('kept') AS t")).toEqual([{ t: null }]);
    await pgs.stop();
  });

  it("a killed run's postmaster is found through the data dir, and its cluster swept once the run dir is gone", async () => {
    const runDir = path.join(closedFolder(), ".data", "test", "run-1");
    const dataDir = path.join(runDir, "postgres");
    const pgs = await startEmbeddedPostgres({ dataDir, persistent: false });
    const [{ dir }] = await query(pgs.url, "SELECT current_setting('data_directory') AS dir");
    const pid = Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    // As test/setup/global-setup.ts cleans up after a run killed with -9 (here: never stopped).
    await stopStalePostmaster(dataDir);
    expect(isAlive(pid)).toBe(false);
    fs.rmSync(runDir, { recursive: true, force: true });
    expect(fs.existsSync(dir)).toBe(true);
    await sweepRuntimeDir();
    expect(fs.existsSync(path.dirname(dir))).toBe(false);
  });

  it("runs binaries it cannot reach from one copy outside the folder, removed with the checkout", async () => {
    const folder = closedFolder();
    const real = await packageBinaries();
    const native = path.join(folder, "node_modules", "native");
    fs.mkdirSync(path.dirname(native));
    fs.symlinkSync(path.dirname(path.dirname(real.postgres)), native);
    const inFolder = { initdb: path.join(native, "bin", "initdb"), postgres: path.join(native, "bin", "postgres") };
    const postgresUser = { uid: Number(execFileSync("id", ["-u", "postgres"])), gid: Number(execFileSync("id", ["-g", "postgres"])) };
    expect(spawnSync(inFolder.postgres, ["--version"], postgresUser).error).toMatchObject({ code: "EACCES" });

    const placed = await placePostgres(path.join(folder, ".data", "postgres"), inFolder);
    expect(placed.postgres.startsWith(RUNTIME_DIR + path.sep)).toBe(true);
    expect(spawnSync(placed.postgres, ["--version"], postgresUser).stdout.toString()).toContain("18.");
    const copy = path.dirname(path.dirname(placed.postgres));
    const copied = fs.statSync(copy).ino;
    const again = await placePostgres(path.join(folder, ".data", "postgres"), inFolder);
    expect(again.initdb).toBe(placed.initdb);
    expect(fs.statSync(copy).ino).toBe(copied); // not copied again
    again.remove();

    fs.rmSync(folder, { recursive: true });
    await sweepRuntimeDir();
    expect(fs.existsSync(copy)).toBe(false);
  });
});
