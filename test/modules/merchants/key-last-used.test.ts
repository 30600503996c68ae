import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestService, type TestService } from "../../helpers/service.js";

// A key's last use is recorded at most once a minute: a busy key is read, not written, per request.
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(() => svc?.stop());

const lastUsed = async (merchantId: string) =>
  (await svc.deps.db.pool.query(`SELECT last_used_at FROM api_keys WHERE merchant_id = $1`, [merchantId])).rows[0]
    .last_used_at as Date | null;

it("records the first use, not the next ones within a minute, then again after a minute", async () => {
  const m = await svc.newMerchant();
  expect(await lastUsed(m.id)).toBeNull();
  expect((await svc.http("GET", "/promo-status", { apiKey: m.apiKey })).status).toBe(200);
  const first = await lastUsed(m.id);
  expect(first).toBeInstanceOf(Date);

  for (let i = 0; i < 3; i++) expect((await svc.http("GET", "/promo-status", { apiKey: m.apiKey })).status).toBe(200);
  expect((await lastUsed(m.id))!.getTime()).toBe(first!.getTime());

  await svc.deps.db.pool.query(`UPDATE api_keys SET last_used_at = now() - interval '61 seconds' WHERE merchant_id = $1`, [m.id]);
  const stale = (await lastUsed(m.id))!.getTime();
  expect((await svc.http("GET", "/promo-status", { apiKey: m.apiKey })).status).toBe(200);
  expect((await lastUsed(m.id))!.getTime()).toBeGreaterThan(stale + 60_000);
});

it("a revoked key is refused and not touched", async () => {
  const m = await svc.newMerchant();
  await svc.deps.db.pool.query(`UPDATE api_keys SET revoked_at = now() WHERE merchant_id = $1`, [m.id]);
  const res = await svc.http("GET", "/promo-status", { apiKey: m.apiKey });
  expect(res.status).toBe(401);
  expect(await lastUsed(m.id)).toBeNull();
});
