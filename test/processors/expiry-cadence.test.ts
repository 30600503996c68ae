import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { expiry } from "../../processors/expiry.js";
import { startProcessors, type ProcessorRunner } from "../../processors/runner.js";
import { chainHelpers, waitFor } from "../helpers/chain.js";
import { startTestService, type TestService } from "../helpers/service.js";

// The expiry job runs once a minute (spec: "expiry job"). The cadence is tested on the real clock with the same
// processor at a tenth of its interval, so the test waits seconds rather than minutes: a payment whose link lapses
// just after a pass stays pending until the next pass, and is expired by it.

vi.setConfig({ testTimeout: 60_000 });
const INTERVAL = 6_000;
const CHAIN = 777177;

let svc: TestService;
let runner: ProcessorRunner | undefined;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(async () => {
  await runner?.stop();
  await svc?.stop();
});

async function lastPass(): Promise<number | undefined> {
  const { rows } = await svc.deps.db.pool.query(`SELECT updated_at FROM processor_state WHERE key = 'heartbeat:expiry'`);
  return rows[0] ? (rows[0].updated_at as Date).getTime() : undefined;
}

it("runs once a minute", () => {
  expect(expiry().intervalMs).toBe(60_000);
});

it("expires a lapsed payment at the next pass, not before", async () => {
  const m = await svc.newMerchant({ name: "Expiry cadence" });
  runner = startProcessors(svc.deps, [{ ...expiry(), intervalMs: INTERVAL }], () => {});
  const first = await waitFor(lastPass, { what: "the expiry job's first pass" });

  const res = await svc.http("POST", "/payments", {
    apiKey: m.apiKey,
    body: {
      orderId: `order-${Math.random()}`,
      chainId: String(CHAIN),
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      token: chainHelpers(svc.deps.chains.find((c) => c.chainId === CHAIN)!).token("USDT").address,
      amount: "1",
      expiresAt: Date.now() + 1_000,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id = (res.body.url as string).split("/pay/")[1]!;
  const status = async () => (await svc.deps.db.pool.query(`SELECT status FROM payments WHERE id = $1`, [id])).rows[0].status;

  // Lapsed, but the job has not run since: still pending half an interval after the first pass.
  await new Promise((r) => setTimeout(r, Math.max(0, first + INTERVAL / 2 - Date.now())));
  expect(await status()).toBe("pending");
  expect(await lastPass()).toBe(first);

  await waitFor(async () => (await status()) === "expired", { timeout: 3 * INTERVAL, interval: 100, what: "payment expired" });
  const { rows } = await svc.deps.db.pool.query(`SELECT created_at FROM payment_events WHERE payment_id = $1 AND to_status = 'expired'`, [
    id,
  ]);
  expect(rows).toHaveLength(1);
  const expiredAt = (rows[0].created_at as Date).getTime();
  // The second pass: an interval after the first (the first pass's heartbeat is written when it ends).
  expect(expiredAt - first).toBeGreaterThanOrEqual(INTERVAL - 100);

  // /health knows the job's cadence: stale after its interval plus the two-minute grace.
  const health = await svc.http("GET", "/health");
  expect(health.body.processors.find((p: { name: string }) => p.name === "expiry")).toMatchObject({
    ok: true,
    staleAfterMs: INTERVAL + 120_000,
  });
});
