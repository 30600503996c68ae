import { afterAll, beforeAll, expect, it } from "vitest";
import { startApiServer } from "../../../api/server.js";
import { createDeps } from "../../../app/deps.js";
import { createApiKey, createMerchant } from "../../../modules/merchants/index.js";
import { newIp } from "../../helpers/clocked-api.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { manualClock } from "../../modules/webhooks/helpers/fixtures.js";

// Two API replicas on one database share the spec's limits (GET /balance: 60 requests/minute per
// merchant). The clock stands still unless the test moves it, so the counts are exact.
const clock = manualClock();
// A third replica whose clock runs 90 s behind the others (within CLOCK_SKEW_TOLERANCE_MS).
const SKEW_MS = 90_000;
let deps: TestDeps;
let replicaDeps: ReturnType<typeof createDeps>;
let laggingDeps: ReturnType<typeof createDeps>;
const servers: Awaited<ReturnType<typeof startApiServer>>[] = [];
beforeAll(async () => {
  deps = await createTestDeps({ now: clock.now });
  replicaDeps = createDeps({ env: deps.env, now: clock.now });
  laggingDeps = createDeps({ env: deps.env, now: () => clock.now() - SKEW_MS });
  servers.push(await startApiServer(deps, 0), await startApiServer(replicaDeps, 0), await startApiServer(laggingDeps, 0));
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await replicaDeps?.db.close();
  await laggingDeps?.db.close();
  await deps?.cleanup();
});

/** GET /balance's 429: the `{error}` body of its route family (api/errors.ts), with the draft-7 headers. */
async function expectLimited(res: Response) {
  expect(res.status).toBe(429);
  expect(await res.json()).toEqual({ error: "Too many requests" });
  expect(res.headers.get("ratelimit")).toMatch(/^limit=60, remaining=0, reset=\d+$/);
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
}

async function newKey() {
  const m = await createMerchant(deps.db, { name: "Replicated" });
  return (await createApiKey(deps.db, m.id)).key;
}

it("counts a merchant's requests across replicas", async () => {
  const key = await newKey();
  const urls = servers.map((s) => `http://127.0.0.1:${s.port}/api`);
  const balance = (i: number, k = key) => fetch(`${urls[i % 2]}/balance`, { headers: { "x-api-key": k } });
  const statuses = await Promise.all(Array.from({ length: 60 }, async (_, i) => (await balance(i)).status));
  expect(statuses).toEqual(Array(60).fill(200));
  for (let i = 0; i < 2; i++) await expectLimited(await balance(i));
  // Another merchant is not affected, on either replica.
  const other = await newKey();
  for (let i = 0; i < 2; i++) expect((await balance(i, other)).status).toBe(200);
  // The bucket refills one request a second (60 a minute), whichever replica takes it.
  clock.advance(1000);
  expect((await balance(1)).status).toBe(200);
  await expectLimited(await balance(0));
  clock.advance(60_000);
  expect((await Promise.all(Array.from({ length: 60 }, async (_, i) => (await balance(i)).status))).every((s) => s === 200)).toBe(true);
});

it("a replica whose clock lags does not refill a bucket another replica emptied (review: skew reset the bucket)", async () => {
  const key = await newKey();
  // Each request from an address of its own: only the merchant's bucket can refuse it (the lagging replica also sees
  // the loopback address's bucket as a minute and a half ahead, and would refuse on that alone).
  const balance = (i: number, k = key) =>
    fetch(`http://127.0.0.1:${servers[i]!.port}/api/balance`, { headers: { "x-api-key": k, "x-forwarded-for": newIp() } });
  const statuses = await Promise.all(Array.from({ length: 60 }, async () => (await balance(0)).status));
  expect(statuses).toEqual(Array(60).fill(200));
  // Alternating between the replicas gives no fresh burst: the lagging one sees the bucket as emptier still.
  for (let round = 0; round < 3; round++) {
    await expectLimited(await balance(2));
    await expectLimited(await balance(0));
  }
  // What refuses is that merchant's bucket: another merchant is served by the lagging replica.
  expect((await balance(2, await newKey())).status).toBe(200);
});
