import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, inject, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { activeChains } from "../../chains/runtime.js";
import { DEV_HASH_SECRET } from "../../core/config.js";
import { createDb } from "../../db/client.js";
import { freePort } from "../../local/ports.js";
import { createApiKey, createMerchant } from "../../modules/merchants/index.js";
import { waitFor } from "../helpers/chain.js";

// `npm run serve` as an operator runs it: a child process configured by its environment alone,
// against the run's chains and database (the run's Ponder already indexes them: no indexer role).
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const stackEnv = inject("stackEnv");
const schema = `app_t${randomBytes(5).toString("hex")}`;
const db = createDb({ url: stackEnv.DATABASE_URL!, schema });

afterAll(async () => {
  await db.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await db.close();
});

/** Only what a shell needs: nothing of this process's configuration leaks into the child. */
const shellEnv = () => Object.fromEntries(["PATH", "HOME", "TMPDIR"].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));

function serve(env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/serve.ts"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (d) => (out.stdout += d));
  child.stderr.on("data", (d) => (out.stderr += d));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
  return { child, out, exited };
}

it("serves the API and the processors from the environment, then stops in order on SIGTERM (exit 0)", async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/api`;
  const s = serve({
    ...shellEnv(),
    ...stackEnv,
    ROLES: "api,processors",
    APP_SCHEMA: schema,
    HOST: "127.0.0.1",
    PORT: String(port),
    HASH_SECRET: randomBytes(16).toString("hex"),
    // The stack's settler (serve refuses one its factory does not authorise): a fresh schema has nothing for it to sweep.
    // The stack runs the bridge stand-in (BRIDGE_API_URL): production wants the key that cancels unfilled orders.
    BRIDGE_AUTHORITY_PRIVATE_KEY: generatePrivateKey(),
  });
  try {
    const early = s.exited.then((c) => Promise.reject(new Error(`serve exited early (${c}): ${s.out.stderr}`)));
    early.catch(() => {}); // the race below reports it; a later, orderly exit must not
    const health = await Promise.race([
      waitFor(
        async () => {
          const res = await fetch(`${url}/health`).catch(() => null);
          return res?.status === 200 && ((await res.json()) as any);
        },
        { timeout: 45_000, interval: 200, what: "GET /api/health 200" },
      ),
      early,
    ]);
    expect(health).toMatchObject({ status: "ok", database: { ok: true }, indexer: { ready: true } });
    expect(health.chains.map((c: any) => c.chainId).sort()).toEqual([137, 777177]);

    // A real request against the migrated schema: create a payment with a key made here.
    const merchant = await createMerchant(db, { name: "Serve Merchant" });
    const { key } = await createApiKey(db, merchant.id);
    const usdt = activeChains(stackEnv)
      .find((c) => c.chainId === 777177)!
      .tokens.find((t) => t.symbol === "USDT")!;
    const res = await fetch(`${url}/payments`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({
        merchant: privateKeyToAccount(generatePrivateKey()).address,
        chainId: "777177",
        token: usdt.address,
        amount: "5",
        orderId: `serve-${randomUUID()}`,
      }),
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/pay/[0-9a-f-]{36}$`));

    // The processors role runs: its passes leave heartbeats that health reports.
    await waitFor(
      async () => {
        const h = (await (await fetch(`${url}/health`)).json()) as any;
        return h.processors.length > 0;
      },
      { timeout: 15_000, interval: 200, what: "processor heartbeats" },
    );

    s.child.kill("SIGTERM");
    expect(await s.exited, s.out.stderr).toBe(0);
    expect(s.out.stdout).toContain("stopped");
  } finally {
    if (s.child.exitCode === null && !s.child.signalCode) s.child.kill("SIGKILL");
  }
});

it("API_WORKERS=2: two processes answer on one port; a killed worker is replaced; SIGTERM stops them all", async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/api`;
  const s = serve({
    ...shellEnv(),
    ...stackEnv,
    ROLES: "api",
    API_WORKERS: "2",
    APP_SCHEMA: schema,
    HOST: "127.0.0.1",
    PORT: String(port),
    HASH_SECRET: randomBytes(16).toString("hex"),
    BRIDGE_AUTHORITY_PRIVATE_KEY: generatePrivateKey(),
  });
  /** pids of the workers that answered (each access log line carries its process's pid). */
  const answeredBy = () =>
    new Set(
      s.out.stdout
        .split("\n")
        .filter((l) => l.includes('"msg":"request"'))
        .map((l) => (JSON.parse(l) as { pid: number }).pid),
    );
  try {
    await waitFor(async () => (await fetch(`${url}/health`).catch(() => null)) !== null, {
      timeout: 45_000,
      interval: 200,
      what: "GET /api/health answered",
    });
    // Separate connections, so the primary hands them out to both workers in turn.
    const ask = () => fetch(`${url}/health`, { headers: { connection: "close" } }).then((r) => r.status);
    await waitFor(async () => (await ask(), answeredBy().size === 2), { timeout: 20_000, interval: 50, what: "both workers answering" });
    const [first] = [...answeredBy()];
    expect(first).not.toBe(s.child.pid);

    process.kill(first!, "SIGKILL");
    await waitFor(async () => s.out.stdout.includes(`API worker ${first} exited`), {
      timeout: 10_000,
      interval: 100,
      what: "exit noticed",
    });
    const before = answeredBy();
    await waitFor(async () => (await ask(), [...answeredBy()].some((pid) => !before.has(pid))), {
      timeout: 30_000,
      interval: 100,
      what: "a new worker answering",
    });
    expect(await ask()).toBeLessThan(500);

    s.child.kill("SIGTERM");
    expect(await s.exited, s.out.stderr).toBe(0);
    for (const pid of answeredBy()) expect(() => process.kill(pid, 0)).toThrow();
  } finally {
    if (s.child.exitCode === null && !s.child.signalCode) s.child.kill("SIGKILL");
  }
});

it("refuses to start without its required configuration, naming every missing variable (exit 1)", async () => {
  const s = serve({ ...shellEnv(), ROLES: "api,processors", RPC_URL_137: stackEnv.RPC_URL_137! });
  try {
    expect(await s.exited).toBe(1);
    for (const name of [
      "DATABASE_URL",
      "HASH_SECRET",
      "SECRET_KEY",
      "SETTLER_PRIVATE_KEY",
      "TREASURY_ADDRESS",
      "FACTORY_ADDRESS_137 (chain 137)",
    ])
      expect(s.out.stderr).toContain(name);
    expect(s.out.stderr).toMatch(/^Missing configuration: /m);
    expect(s.out.stdout).not.toContain("serving");
  } finally {
    if (s.child.exitCode === null && !s.child.signalCode) s.child.kill("SIGKILL");
  }
});

it("refuses the development HASH_SECRET and unknown roles", async () => {
  const s = serve({ ...shellEnv(), ...stackEnv, ROLES: "api,worker", HASH_SECRET: DEV_HASH_SECRET });
  try {
    expect(await s.exited).toBe(1);
    expect(s.out.stderr).toContain("HASH_SECRET (the development default)");
    expect(s.out.stderr).toContain('ROLES (unknown role "worker"');
  } finally {
    if (s.child.exitCode === null && !s.child.signalCode) s.child.kill("SIGKILL");
  }
});

it("names each chain's providers without their paths, and refuses one that answers for another chain (exit 1)", async () => {
  const own = stackEnv.RPC_URL_137!;
  const other = stackEnv.RPC_URL_777177!;
  const s = serve({
    ...shellEnv(),
    ...stackEnv,
    ROLES: "api,processors",
    APP_SCHEMA: schema,
    HASH_SECRET: randomBytes(16).toString("hex"),
    SETTLER_PRIVATE_KEY: generatePrivateKey(),
    BRIDGE_AUTHORITY_PRIVATE_KEY: generatePrivateKey(),
    // A second provider for 137 that is really 777177's node, with a key in its query as keyed URLs have.
    RPC_URL_137: `${own}, ${other}/?key=SECRET-KEY`,
  });
  try {
    expect(await s.exited).toBe(1);
    const host = (u: string) => new URL(u).host;
    expect(s.out.stdout).toContain(`chain 137 providers 1:${host(own)}, 2:${host(other)}`);
    expect(s.out.stdout).toContain(`RPC provider 2:${host(other)} of chain 137 answers for chain 777177: fix RPC_URL_137`);
    expect(s.out.stdout + s.out.stderr).not.toContain("SECRET-KEY");
    expect(s.out.stdout).not.toContain("serving");
  } finally {
    if (s.child.exitCode === null && !s.child.signalCode) s.child.kill("SIGKILL");
  }
});
