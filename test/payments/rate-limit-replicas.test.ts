import { afterAll, beforeAll, expect, it } from "vitest";
import { startApiServer } from "../../api/server.js";
import { createDeps } from "../../core/deps.js";
import { startTestService, type TestService } from "../helpers/service.js";

// Two API replicas on one database share the spec's limits (GET /balance: 60 requests/minute).
let svc: TestService;
let replica: Awaited<ReturnType<typeof startApiServer>>;
let replicaDeps: ReturnType<typeof createDeps>;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  replicaDeps = createDeps({ env: svc.deps.env, now: svc.deps.now });
  replica = await startApiServer(replicaDeps, 0);
});
afterAll(async () => {
  await replica?.close();
  await replicaDeps?.db.close();
  await svc?.stop();
});

it("counts a key's requests across replicas", async () => {
  const m = await svc.newMerchant();
  const urls = [svc.url, `http://127.0.0.1:${replica.port}/api`];
  // Windows are whole clock minutes: start at the beginning of one so the 61 requests share it.
  svc.clock.advance(60_000 - (svc.clock.now() % 60_000) + 10);
  const statuses: number[] = [];
  for (let i = 0; i < 61; i++) {
    const res = await fetch(`${urls[i % 2]}/balance`, { headers: { "x-api-key": m.apiKey } });
    statuses.push(res.status);
  }
  expect(statuses.slice(0, 60).every((s) => s === 200)).toBe(true);
  expect(statuses[60]).toBe(429);
  // Another key is not affected, on either replica.
  const other = await svc.newMerchant();
  for (const url of urls) expect((await fetch(`${url}/balance`, { headers: { "x-api-key": other.apiKey } })).status).toBe(200);
  // The next window starts afresh.
  svc.clock.advance(60_000);
  expect((await fetch(`${urls[1]}/balance`, { headers: { "x-api-key": m.apiKey } })).status).toBe(200);
});
