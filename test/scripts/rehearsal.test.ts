import { spawn, spawnSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { createPublicClient, createWalletClient, http, parseEther, toHex, zeroAddress, type Address, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { runDoctor, type DoctorCheck } from "../../app/doctor.js";
import { deploy } from "../../cli/deploy/index.js";
import { createDb, type Db } from "../../db/client.js";
import { ANVIL_KEYS } from "../../local/accounts.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { placeChainPredeploys } from "../../local/deploy.js";
import { freePort } from "../../local/ports.js";
import { createApiKey, createMerchant } from "../../modules/merchants/index.js";
import { waitFor } from "../helpers/chain.js";
import { startPriceIndexServer, type PriceIndexServer } from "../helpers/price-index-server.js";
import { startReceiver, type Receiver } from "../modules/webhooks/helpers/receiver.js";

// A production rehearsal: fresh Anvils with mainnet chain ids (137 and 8453), nothing deployed. `deploy` places the
// contracts on both (one factory address on both), `doctor` passes on the environment alone, `npm run serve` runs
// every role (indexer, API, processors) from that environment, and a merchant is paid on each chain: settled, and
// the webhook delivered. Prices: no Chainlink feed exists on these Anvils, so the price pusher keeps the PriceOracle
// `deploy` placed (owned by the pusher's key) fresh from the price index stand-in. Then three broken setups make
// `npm run cli -- doctor` fail with the right line and a non-zero exit.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const stackEnv = inject("stackEnv");
const schema = `app_t${randomBytes(5).toString("hex")}`;
const deployer = privateKeyToAccount(ANVIL_KEYS[0]);
const payer = privateKeyToAccount(ANVIL_KEYS[3]);
const settlerKey = generatePrivateKey();
const pusherKey = generatePrivateKey();
const owner = privateKeyToAccount(generatePrivateKey()).address;
const feeRecipient = privateKeyToAccount(generatePrivateKey()).address;

let polygon: Anvil;
let base: Anvil;
let index: PriceIndexServer;
let receiver: Receiver;
let dir: string;
let env: Record<string, string>;
let db: Db;
const factories: Record<number, Address> = {};

const client = (a: Anvil) => createPublicClient({ transport: http(a.rpcUrl) }) as PublicClient;
const shellEnv = () => Object.fromEntries(["PATH", "HOME", "TMPDIR"].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));

beforeAll(async () => {
  [polygon, base] = await Promise.all([startAnvil({ chainId: 137, blockTime: 1 }), startAnvil({ chainId: 8453, blockTime: 1 })]);
  index = await startPriceIndexServer();
  index.setNative(137, "0.5");
  index.setNative(8453, "3000");
  receiver = await startReceiver();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "rehearsal-"));
  fs.writeFileSync(path.join(dir, "receiver-ca.pem"), receiver.ca);
  // What Polygon and Base hold before anyone deploys: Multicall3, Base's GasPriceOracle (a stand-in, as locally).
  for (const a of [polygon, base]) await placeChainPredeploys(client(a), a.chainId);
  for (const a of [polygon, base])
    for (const who of [privateKeyToAccount(settlerKey).address, privateKeyToAccount(pusherKey).address])
      await client(a).request({ method: "anvil_setBalance" as any, params: [who, toHex(parseEther("100"))] as any });
  env = {
    DATABASE_URL: stackEnv.DATABASE_URL!,
    APP_SCHEMA: schema,
    RPC_URL_137: polygon.rpcUrl,
    RPC_URL_8453: base.rpcUrl,
    DEPLOYMENTS_FILE: path.join(dir, "deployments.json"),
    SETTLER_PRIVATE_KEY: settlerKey,
    FEE_RECIPIENT: feeRecipient,
    TREASURY_ADDRESS: feeRecipient,
    HASH_SECRET: randomBytes(32).toString("hex"),
    SECRET_KEY: randomBytes(32).toString("hex"),
    PRICE_API_URL: index.url,
    PRICE_PUSHER_PRIVATE_KEY: pusherKey,
    PRICE_PUSHER_INTERVAL_MS: "1000",
    // The registry's mainnet feeds have no code on these Anvils: the pusher's oracle prices both native coins.
    PRICE_FEED_137_MATIC: "none",
    PRICE_FEED_8453_ETH: "none",
    SEQUENCER_FEED_8453: "none",
    SETTLER_INTERVAL_MS: "1000",
    PONDER_PORT: String(await freePort()),
    PONDER_SCHEMA: `ponder_${schema}`,
    PONDER_VIEWS_SCHEMA: `chain_${schema}`,
  };
  db = createDb({ url: env.DATABASE_URL, schema });
});
afterAll(async () => {
  for (const s of [schema, `ponder_${schema}`, `chain_${schema}`])
    await db?.pool.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`).catch(() => {});
  await db?.close();
  await receiver?.close();
  await index?.close();
  await polygon?.stop();
  await base?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const failing = (checks: DoctorCheck[]) => checks.filter((c) => c.status === "fail");

describe("a production rehearsal", () => {
  it("deploy places the contracts on both chains at one factory address; a second run changes nothing", async () => {
    for (const a of [polygon, base]) {
      const opts = {
        chainId: a.chainId,
        rpcUrl: a.rpcUrl,
        account: deployer,
        owner,
        settler: privateKeyToAccount(settlerKey).address,
        feeRecipient,
        oracle: true,
        oracleOwner: privateKeyToAccount(pusherKey).address,
        deploymentsFile: env.DEPLOYMENTS_FILE,
        send: true,
      };
      const first = await deploy(opts);
      expect(first.changed).toBe(true);
      factories[a.chainId] = first.deployment!.factory;
      const again = await deploy(opts);
      expect([again.changed, again.steps.every((s) => s.status === "ok")]).toEqual([false, true]);
    }
    expect(factories[137]).toBe(factories[8453]);
  });

  it("doctor passes on the environment alone (a database to migrate and an indexer not started yet are warnings)", async () => {
    const checks = await runDoctor(env);
    expect(failing(checks)).toEqual([]);
    expect(checks.filter((c) => c.status === "warn").map((c) => c.name)).toEqual(["database", "indexer"]);
    expect(checks.find((c) => c.name === "chain 8453 factory")).toMatchObject({ status: "ok" });
  });

  it("npm run serve from that environment: a merchant paid on each chain, settled and told by webhook", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/api`;
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/serve.ts"], {
      cwd: ROOT,
      // Locally only: the webhook receiver is on 127.0.0.1 (doctor fails WEBHOOK_ALLOW_PRIVATE, rightly, in production).
      env: {
        ...shellEnv(),
        ...env,
        HOST: "127.0.0.1",
        PORT: String(port),
        WEBHOOK_ALLOW_PRIVATE: "true",
        NODE_EXTRA_CA_CERTS: path.join(dir, "receiver-ca.pem"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out = { stdout: "", stderr: "" };
    child.stdout.on("data", (d) => (out.stdout += d));
    child.stderr.on("data", (d) => (out.stderr += d));
    const exited = new Promise<number | string | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
    try {
      const early = exited.then((c) => Promise.reject(new Error(`serve exited (${c}): ${out.stderr}\n${out.stdout.slice(-3000)}`)));
      early.catch(() => {});
      await Promise.race([
        waitFor(
          async () => {
            const res = await fetch(`${url}/health`).catch(() => null);
            const body = res?.status === 200 ? ((await res.json()) as any) : null;
            return body?.indexer?.ready === true;
          },
          { timeout: 90_000, interval: 500, what: "serve healthy with its indexer ready" },
        ),
        early,
      ]);
      const merchant = await createMerchant(db, { name: "Rehearsal Merchant" });
      const { key } = await createApiKey(db, merchant.id);
      const api = async (method: string, p: string, body?: unknown) => {
        const res = await fetch(`${url}${p}`, {
          method,
          headers: { "x-api-key": key, ...(body ? { "content-type": "application/json" } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      const hook = await api("PUT", "/v1/webhooks", { url: receiver.url, events: ["payment.completed"] });
      expect(hook.status, JSON.stringify(hook.body)).toBeLessThan(300);

      const payouts: Record<number, Address> = {};
      const ids: Record<number, string> = {};
      for (const [a, amount] of [
        [polygon, "10"],
        [base, "0.01"],
      ] as const) {
        payouts[a.chainId] = privateKeyToAccount(generatePrivateKey()).address;
        const created = await api("POST", "/payments", {
          merchant: payouts[a.chainId],
          chainId: String(a.chainId),
          token: zeroAddress,
          amount,
          gasless: true,
          orderId: `rehearsal-${randomUUID()}`,
        });
        expect(created.status, `${JSON.stringify(created.body)}\n${out.stdout.slice(-3000)}`).toBe(200);
        const id = (created.body.url as string).split("/pay/")[1]!;
        ids[a.chainId] = id;
        const { rows } = await db.pool.query(`SELECT recipient_address, amount_units FROM payments WHERE id = $1`, [id]);
        const wallet = createWalletClient({ transport: http(a.rpcUrl), account: payer });
        await wallet.sendTransaction({ to: rows[0].recipient_address, value: BigInt(rows[0].amount_units), chain: null });
      }
      for (const a of [polygon, base]) {
        await waitFor(
          async () => (await db.pool.query(`SELECT status FROM payments WHERE id = $1`, [ids[a.chainId]])).rows[0].status === "completed",
          { timeout: 90_000, interval: 500, what: `the payment on chain ${a.chainId} completed` },
        );
        const { rows } = await db.pool.query(`SELECT settled_units FROM payments WHERE id = $1`, [ids[a.chainId]]);
        expect(await client(a).getBalance({ address: payouts[a.chainId]! })).toBe(BigInt(rows[0].settled_units));
      }
      await receiver.waitFor(2, 60_000);
      const events = receiver.received.map((r) => JSON.parse(r.rawBody));
      expect(events.map((e) => [e.event, e.paymentId]).sort()).toEqual(
        [
          ["payment.completed", ids[137]],
          ["payment.completed", ids[8453]],
        ].sort(),
      );
      // The pusher set both oracles meanwhile; the indexer caught up: doctor finds nothing to warn about.
      const after = await runDoctor(env);
      expect(after.filter((c) => c.status !== "ok")).toEqual([]);

      child.kill("SIGTERM");
      expect(await exited, out.stderr).toBe(0);
    } finally {
      if (child.exitCode === null && !child.signalCode) child.kill("SIGKILL");
    }
  });

  describe("npm run cli -- doctor on a broken setup names the failing check and exits non-zero", () => {
    const doctor = (overrides: Record<string, string>) =>
      spawnSync(process.execPath, ["--import", "tsx", path.resolve(ROOT, "scripts/cli.ts"), "doctor"], {
        cwd: ROOT,
        env: { ...shellEnv(), ...env, ...overrides },
        encoding: "utf8",
        timeout: 60_000,
      });

    it("an RPC URL of another chain", () => {
      const r = doctor({ RPC_URL_137: base.rpcUrl });
      expect(r.status, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toContain(`FAIL  chain 137 rpc 1:${new URL(base.rpcUrl).host}: answers for chain 8453`);
    });

    it("a settler the factory does not authorise", () => {
      const stranger = generatePrivateKey();
      const r = doctor({ SETTLER_PRIVATE_KEY: stranger });
      expect(r.status, r.stdout + r.stderr).toBe(1);
      const who = privateKeyToAccount(stranger).address;
      expect(r.stdout).toContain(`FAIL  chain 137 settler: ${who} is not a settler of ${factories[137]}: every sweep would revert`);
      expect(r.stdout).toContain(`-> the factory's owner calls setSettler(${who}, true)`);
    });

    it("a stale price: the index down and the oracle older than ORACLE_MAX_AGE_S", async () => {
      index.mode = "fail";
      try {
        await client(polygon).request({ method: "evm_increaseTime" as any, params: [toHex(120)] as any });
        await client(polygon).request({ method: "evm_mine" as any, params: [] as any });
        const r = doctor({ ORACLE_MAX_AGE_S: "60" });
        expect(r.status, r.stdout + r.stderr).toBe(1);
        expect(r.stdout).toMatch(
          /FAIL {2}chain 137 price MATIC: unavailable: .*PriceOracle MATIC on chain 137: stale, set \d+ s ago \(ORACLE_MAX_AGE_S 60\)/,
        );
      } finally {
        index.mode = "ok";
      }
    });
  });
});
