import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { guardChild, stopChild } from "./child.js";
import { freePort } from "./ports.js";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");

export type PonderProcess = {
  url: string;
  port: number;
  schema: string;
  process: ChildProcess;
  waitReady(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
};

/**
 * A Ponder schema can only be reused by the same build (config + indexing code + chains), so
 * the schema name is derived from all of those; `chainKey` should tell fresh chains apart.
 */
export function ponderSchemaName(chainKey: string): string {
  const h = createHash("sha256");
  // Every file under src/ is indexing code (Ponder hashes them all into its build id).
  const src = fs.readdirSync(path.join(ROOT, "src"), { recursive: true, encoding: "utf8" }).map((f) => path.join("src", f));
  for (const f of ["ponder.config.ts", "ponder.schema.ts", ...src.sort(), "package-lock.json"]) {
    const p = path.join(ROOT, f);
    if (fs.existsSync(p) && fs.statSync(p).isFile()) h.update(fs.readFileSync(p));
  }
  h.update(chainKey);
  return `ponder_${h.digest("hex").slice(0, 12)}`;
}

/** What a Ponder process may see of the environment when it must not inherit it (no keys, no secrets). */
const PONDER_ENV =
  /^(PATH|HOME|TMPDIR|LANG|TZ|NODE_OPTIONS|DATABASE_URL|APP_SCHEMA|DEPLOYMENTS_FILE|LOCAL_CHAINS|PONDER_[A-Z_]+|RPC_TIMEOUT_MS|RPC_MAX_LAG_BLOCKS|(RPC_URL|RPC_MAX_RPS|TOKEN_ADDRESS|FACTORY_ADDRESS|FACTORY_IMPLEMENTATION|ORACLE_ADDRESS|START_BLOCK)_[A-Z0-9_]+)$/;

/** The environment variables of `env` that the indexer needs. */
export function ponderEnv(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => PONDER_ENV.test(k)));
}

export async function startPonder(opts: {
  env: Record<string, string | undefined>;
  /** false: the child sees only `opts.env` (plus PATH and the like), not this process's environment. */
  inheritEnv?: boolean;
  /** Another Ponder project to run (default: this checkout's indexer). */
  root?: string;
  schema: string;
  viewsSchema: string;
  port?: number;
  logFile?: string;
}): Promise<PonderProcess> {
  const port = opts.port ?? (await freePort());
  const bin = path.join(ROOT, "node_modules", "ponder", "dist", "esm", "bin", "ponder.js");
  const out = opts.logFile ? fs.openSync(opts.logFile, "a") : "inherit";
  const child = spawn(
    process.execPath,
    [
      // The test run may profile its indexer during a stall (test/setup/indexer-lag.ts).
      ...(process.env.PONDER_INSPECT_PORT ? [`--inspect=127.0.0.1:${process.env.PONDER_INSPECT_PORT}`] : []),
      bin,
      ...(opts.root ? ["--root", opts.root] : []),
      "start",
      "--schema",
      opts.schema,
      "--views-schema",
      opts.viewsSchema,
      "--port",
      String(port),
      "--hostname",
      "127.0.0.1",
    ],
    {
      cwd: opts.root ?? ROOT,
      // PORT too: Ponder reads it, and the service's own PORT would send Ponder elsewhere.
      env: {
        ...(opts.inheritEnv === false ? ponderEnv(process.env) : process.env),
        ...opts.env,
        PORT: String(port),
        PONDER_TELEMETRY_DISABLED: "true",
        PONDER_LOG_LEVEL: process.env.PONDER_LOG_LEVEL ?? "warn",
        NODE_ENV: "production",
      },
      stdio: ["ignore", out, out],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  guardChild(child);
  return {
    url,
    port,
    schema: opts.schema,
    process: child,
    async waitReady(timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (child.exitCode !== null)
          throw new Error(`ponder exited with code ${child.exitCode}${opts.logFile ? ` (see ${opts.logFile})` : ""}`);
        const res = await fetch(`${url}/ready`).catch(() => null);
        if (res?.status === 200) return;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`ponder not ready after ${timeoutMs} ms`);
    },
    stop: () => stopChild(child, 10_000),
  };
}
