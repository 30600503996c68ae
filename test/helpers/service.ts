import { createWalletClient, http as viemHttp, parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { walletFactoryAbi } from "../../abis/WalletFactory.js";
import { startApiServer } from "../../api/server.js";
import { LOCAL_ROLES } from "../../local/accounts.js";
import { freePort } from "../../local/ports.js";
import { viemChain } from "../../chains/clients.js";
import { createApiKey, createMerchant, type MerchantType } from "../../modules/merchants/index.js";
import { allProcessors } from "../../processors/index.js";
import { startProcessors, type ProcessorRunner } from "../../processors/runner.js";
import { readResponse } from "./clocked-api.js";
import { noteProcessorLog } from "./diagnostics.js";
import { createTestDeps, type TestDeps } from "./deps.js";

/** A controllable clock: real time plus an offset the test can move forward, or stopped (`freeze`) until `resume`. */
export function testClock() {
  let offset = 0;
  let frozen: number | undefined;
  return {
    now: () => frozen ?? Date.now() + offset,
    advance: (ms: number) => void (frozen === undefined ? (offset += ms) : (frozen += ms)),
    /** Stops time, so token-bucket rate limits count exactly (they refill as time passes). */
    freeze: () => void (frozen ??= Date.now() + offset),
    resume: () => {
      if (frozen !== undefined) offset = frozen - Date.now();
      frozen = undefined;
    },
  };
}

export type TestService = {
  deps: TestDeps;
  url: string;
  clock: ReturnType<typeof testClock>;
  processors?: ProcessorRunner;
  newMerchant(opts?: { type?: MerchantType; name?: string; email?: string; password?: string }): Promise<{ id: string; apiKey: string }>;
  http(
    method: string,
    path: string,
    opts?: { body?: unknown; apiKey?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  stop(): Promise<void>;
};

/** The API on a free port plus (optionally) every processor, on the run's stack, in a fresh schema. */
export async function startTestService(opts: { processors?: boolean; env?: Record<string, string> } = {}): Promise<TestService> {
  const clock = testClock();
  const base = await createTestDeps({ env: opts.env });
  // Test files run in parallel against the same chains: each gets a settler key of its own, so
  // their nonces never collide (the factory allows several settlers).
  const settlerKey = generatePrivateKey();
  await authorizeSettler(base, privateKeyToAccount(settlerKey).address);
  await base.cleanup();
  // The port is chosen first, so BASE_URL and APP_URL name the server's real origin: browsers' form posts are
  // checked against it (core/same-origin.ts).
  const port = opts.env?.PORT ? Number(opts.env.PORT) : await freePort();
  const deps = await createTestDeps({ now: clock.now, env: { PORT: String(port), ...opts.env, SETTLER_PRIVATE_KEY: settlerKey } });
  const api = await startApiServer(deps, port);
  const url = `http://127.0.0.1:${api.port}/api`;
  const processors = opts.processors === false ? undefined : startProcessors(deps, allProcessors(), noteProcessorLog);
  return {
    deps,
    url,
    clock,
    processors,
    async newMerchant(o = {}) {
      const m = await createMerchant(deps.db, { name: o.name ?? "Test Merchant", type: o.type, email: o.email, password: o.password });
      return { id: m.id, apiKey: (await createApiKey(deps.db, m.id)).key };
    },
    async http(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.body !== undefined) headers["content-type"] = "application/json";
      if (o.apiKey) headers["x-api-key"] = o.apiKey;
      const res = await fetch(url + path, {
        method,
        headers,
        body: o.body === undefined ? undefined : typeof o.body === "string" ? o.body : JSON.stringify(o.body),
      });
      return readResponse(res);
    },
    async stop() {
      await processors?.stop();
      await api.close();
      await deps.cleanup();
    },
  };
}

/** Allows `settler` to sweep on every chain's factory, and gives it gas. */
export async function authorizeSettler(deps: TestDeps, settler: Address) {
  // The deployer (factory owner) is shared by parallel test files: one of them at a time.
  const lock = await deps.db.pool.connect();
  await lock.query(`SELECT pg_advisory_lock(hashtext('test:deployer'))`);
  try {
    await authorizeOn(deps, settler);
  } finally {
    await lock.query(`SELECT pg_advisory_unlock(hashtext('test:deployer'))`);
    lock.release();
  }
}

async function authorizeOn(deps: TestDeps, settler: Address) {
  for (const chain of deps.chains) {
    const pub = deps.clients.get(chain.chainId)!;
    const owner = createWalletClient({ chain: viemChain(chain), transport: viemHttp(chain.rpcUrl), account: LOCAL_ROLES.deployer });
    await pub.request({ method: "anvil_setBalance" as any, params: [settler, `0x${parseEther("1000").toString(16)}`] as any });
    const hash = await owner.writeContract({
      address: chain.factory!,
      abi: walletFactoryAbi,
      functionName: "setSettler",
      args: [settler, true],
    });
    await pub.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  }
}
