import { randomUUID } from "node:crypto";
import { parseUnits, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { encodeCursor } from "../../../core/cursor.js";
import { withTransaction } from "../../../db/client.js";
import { encodeFeedCursor } from "../../../modules/events/index.js";
import { createApiKey } from "../../../modules/merchants/index.js";
import { vaultOfCaller } from "../../../modules/vault/index.js";
import { enqueueVaultWebhook } from "../../../modules/webhooks/index.js";
import { allProcessors } from "../../../processors/index.js";
import { startProcessors, type ProcessorRunner } from "../../../processors/runner.js";
import { webhookDispatcher } from "../../../processors/webhook-dispatcher.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { startReceiver, type Receiver } from "../webhooks/helpers/receiver.js";

// GET /v1/events on the run's stack (chain 777177): every event of the merchant in the order it was written, with the
// webhook's payload and id, whatever the webhook subscription, and while the webhook dispatcher is down (every
// processor runs but the dispatcher, started only at the end). Pagination, errors and visibility.

let svc: TestService;
let receiver: Receiver;
let runner: ProcessorRunner;
let dispatcher: ProcessorRunner | undefined;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  receiver = await startReceiver();
  // The dispatcher outage: every processor of the service but the webhook dispatcher.
  runner = startProcessors(
    svc.deps,
    allProcessors().filter((p) => p.name !== "webhook-dispatcher"),
    () => {},
  );
});
afterAll(async () => {
  await dispatcher?.stop();
  await runner?.stop();
  await svc?.stop();
  await receiver?.close();
});
vi.setConfig({ testTimeout: 300_000 });

type Shop = { id: string; apiKey: string };
const chain = () => svc.deps.chains.find((c) => c.chainId === 777177)!;
const usdt = () => chainHelpers(chain()).token("USDT").address;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
// Generous: on a loaded 2-core machine Ponder can take tens of seconds to index a block.
const WAIT = { timeout: 180_000 };

async function create(m: Shop, body: Record<string, unknown> = {}): Promise<string> {
  const res = await svc.http("POST", "/payments", {
    apiKey: m.apiKey,
    body: { merchant: payout(), chainId: "777177", token: usdt(), amount: "1", orderId: `feed-${randomUUID()}`, ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.url as string).split("/pay/")[1]!;
}
/** A payment created and cancelled at once: one `payment.cancelled`, no chain involved. */
async function cancelled(m: Shop): Promise<string> {
  const id = await create(m);
  const res = await svc.http("POST", `/v1/payments/${id}/cancel`, { apiKey: m.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return id;
}
async function status(id: string): Promise<string> {
  return (await svc.deps.db.pool.query(`SELECT status FROM payments WHERE id = $1`, [id])).rows[0].status;
}
async function until(id: string, want: string) {
  await waitFor(async () => (await status(id)) === want, { ...WAIT, what: `payment ${id} to be ${want}` });
}
async function pay(id: string, amount: string) {
  const { rows } = await svc.deps.db.pool.query(`SELECT recipient_address FROM payments WHERE id = $1`, [id]);
  await chainHelpers(chain()).pay("USDT", rows[0].recipient_address as Address, parseUnits(amount, 6));
}
const feed = (apiKey: string | undefined, query = "") => svc.http("GET", `/v1/events${query}`, { apiKey });
/** The whole feed, page by page (`limit`), checking each page on the way. */
async function walk(apiKey: string, limit?: number): Promise<{ events: any[]; cursor: string }> {
  const events: any[] = [];
  let after: string | undefined;
  for (let i = 0; i < 100; i++) {
    const q = new URLSearchParams({ ...(limit ? { limit: String(limit) } : {}), ...(after ? { after } : {}) });
    const res = await feed(apiKey, `?${q}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (limit) expect(res.body.data.length).toBeLessThanOrEqual(limit);
    events.push(...res.body.data);
    expect(typeof res.body.nextCursor).toBe("string");
    after = res.body.nextCursor;
    if (!res.body.hasMore) return { events, cursor: after! };
  }
  throw new Error("the feed never ended");
}
const summary = (events: any[]) => events.map((e) => [e.type, e.payload.paymentId]);

describe("GET /v1/events", () => {
  it("has every event of the merchant in write order, subscribed or not, through a dispatcher outage; deliveries carry its id and body", async () => {
    const a = await svc.newMerchant({ name: "Feed shop" });
    // Subscribed to two of the four events this test causes: the feed has all four.
    const hook = await svc.http("PUT", "/v1/webhooks", {
      apiKey: a.apiKey,
      body: { url: receiver.url, events: ["payment.completed", "payment.cancelled"] },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);

    const cancelledId = await cancelled(a);
    const paidId = await create(a, { amount: "2", gasless: true });
    await pay(paidId, "2");
    await until(paidId, "completed");
    // Gas Tank mode with an empty Gas Tank: awaiting_gas.
    const gasId = await create(a, { amount: "3" });
    await pay(gasId, "3");
    await until(gasId, "awaiting_gas");
    // Expiry on the service's clock: a minute ahead (a slow POST still gets a future expiresAt), then moved past it.
    const expiringId = await create(a, { amount: "4", expiresAt: svc.clock.now() + 60_000 });
    await runner.runOnce("expiry");
    expect(await status(expiringId)).toBe("pending");
    svc.clock.advance(120_000);
    await runner.runOnce("expiry");
    await until(expiringId, "expired");

    const expected = [
      ["payment.cancelled", cancelledId],
      ["payment.completed", paidId],
      ["payment.awaiting_gas", gasId],
      ["payment.expired", expiringId],
    ];
    const res = await feed(a.apiKey);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(summary(res.body.data)).toEqual(expected);
    expect(res.body.hasMore).toBe(false);
    for (const e of res.body.data) {
      expect(e).toEqual({
        id: expect.any(String),
        type: e.payload.event,
        kind: "payment",
        createdAt: expect.any(Number),
        payload: e.payload,
      });
      expect(e.payload).toMatchObject({ event: e.type, status: e.type.slice("payment.".length) });
    }
    expect(res.body.data[1].payload).toMatchObject({ amount: "2", receivedAmount: "2", chainId: 777177 });
    expect(res.body.data[2].payload).toMatchObject({ amount: "3", estimatedFeeUsdt: expect.any(String), gasTankBalance: "0" });
    const byId = new Map<string, any>(res.body.data.map((e: any) => [e.id, e]));
    expect(byId.size).toBe(4);

    // The dispatcher is down: the subscribed events wait in the outbox under the feed's ids, never attempted; the
    // other two were never queued.
    const { rows: queued } = await svc.deps.db.pool.query(
      `SELECT id, event, status, attempts, body FROM webhook_deliveries WHERE merchant_id = $1 ORDER BY created_at`,
      [a.id],
    );
    expect(queued.map((d) => [d.event, d.status, d.attempts])).toEqual([
      ["payment.cancelled", "pending", 0],
      ["payment.completed", "pending", 0],
    ]);
    for (const d of queued) {
      expect(byId.get(d.id)?.type, `delivery ${d.id} is the feed's event`).toBe(d.event);
      expect(d.body).toBe(JSON.stringify(byId.get(d.id).payload));
    }

    // One event at a time, each once, in the same order; the last cursor answers nothing more, and itself.
    const paged = await walk(a.apiKey, 1);
    expect(paged.events.map((e) => e.id)).toEqual(res.body.data.map((e: any) => e.id));
    const after = await feed(a.apiKey, `?after=${paged.cursor}`);
    expect(after.body).toEqual({ data: [], nextCursor: paged.cursor, hasMore: false });

    // The dispatcher comes back: each delivery is the feed's event, byte for byte, under its id.
    dispatcher = startProcessors(svc.deps, [webhookDispatcher({ tls: { ca: receiver.ca }, log: () => {} })], () => {});
    await receiver.waitFor(2, 120_000);
    const delivered = receiver.received.map((r) => ({ id: r.headers["webhook-id"]!, raw: r.rawBody }));
    expect(delivered.map((d) => byId.get(d.id)?.type).sort()).toEqual(["payment.cancelled", "payment.completed"]);
    for (const d of delivered) {
      expect(d.raw).toBe(JSON.stringify(byId.get(d.id).payload));
      expect(JSON.parse(d.raw)).toEqual(byId.get(d.id).payload);
    }
  });

  it("pages: limit walks every event once in order, the cursor resumes, after=now follows only what comes next", async () => {
    // No webhook at all: the feed has the events anyway.
    const m = await svc.newMerchant({ name: "Pager" });
    const ids = [await cancelled(m), await cancelled(m), await cancelled(m)];
    // A read while the event-feed processor is positioning these very events answers what was positioned before
    // (modules/events/sequence.ts: readers never wait for the lock); a moment later they are all there.
    let all = await walk(m.apiKey);
    await waitFor(async () => (all = await walk(m.apiKey)).events.length === 3, {
      ...WAIT,
      interval: 100,
      what: "the three events in the feed",
    });
    expect(summary(all.events)).toEqual(ids.map((id) => ["payment.cancelled", id]));
    const one = await walk(m.apiKey, 1);
    expect(one.events.map((e) => e.id)).toEqual(all.events.map((e) => e.id));
    expect(new Set(one.events.map((e) => e.id)).size).toBe(3);

    const first = await feed(m.apiKey, "?limit=2");
    expect(first.status).toBe(200);
    expect(summary(first.body.data)).toEqual(ids.slice(0, 2).map((id) => ["payment.cancelled", id]));
    expect(first.body.hasMore).toBe(true);
    const rest = await feed(m.apiKey, `?limit=2&after=${first.body.nextCursor}`);
    expect(summary(rest.body.data)).toEqual([["payment.cancelled", ids[2]]]);
    expect(rest.body.hasMore).toBe(false);

    const now = await feed(m.apiKey, "?after=now");
    expect(now.status).toBe(200);
    expect(now.body).toEqual({ data: [], nextCursor: expect.any(String), hasMore: false });
    const later = await cancelled(m);
    const next = await feed(m.apiKey, `?after=${now.body.nextCursor}`);
    expect(summary(next.body.data)).toEqual([["payment.cancelled", later]]);
    // One event by id, as the feed has it.
    const single = await svc.http("GET", `/v1/events/${next.body.data[0].id}`, { apiKey: m.apiKey });
    expect(single.status).toBe(200);
    expect(single.body).toEqual(next.body.data[0]);
  });

  it("400 with GET /v1/payments's bodies for a bad limit or cursor, 401 without a key, 404 for an unknown event", async () => {
    const m = await svc.newMerchant({ name: "Errors" });
    const LIMIT = { error: "limit must be an integer between 1 and 100", code: "invalid_query" };
    for (const limit of ["0", "101", "abc", "1.5", "-1", ""]) {
      const res = await feed(m.apiKey, `?limit=${encodeURIComponent(limit)}`);
      expect({ limit, status: res.status, body: res.body }).toEqual({ limit, status: 400, body: LIMIT });
      // The very answer of the payment list.
      const payments = await svc.http("GET", `/v1/payments?limit=${encodeURIComponent(limit)}`, { apiKey: m.apiKey });
      expect({ limit, status: payments.status, body: payments.body }).toEqual({ limit, status: 400, body: LIMIT });
    }
    const listCursor = encodeCursor({ at: "2024-01-01T00:00:00.000000Z", id: randomUUID() });
    for (const after of [
      "garbage!",
      "",
      Buffer.from("ev:-1").toString("base64url"),
      Buffer.from("ev:01").toString("base64url"),
      listCursor,
    ]) {
      const res = await feed(m.apiKey, `?after=${encodeURIComponent(after)}`);
      expect({ after, status: res.status, body: res.body }).toEqual({
        after,
        status: 400,
        body: { error: "after is not a nextCursor of this feed", code: "invalid_query" },
      });
    }
    // A cursor of the feed is fine, even far beyond its end.
    expect((await feed(m.apiKey, `?after=${encodeFeedCursor("9000000000000000000")}`)).body).toEqual({
      data: [],
      nextCursor: encodeFeedCursor("9000000000000000000"),
      hasMore: false,
    });

    const UNAUTHORIZED = { status: 401, body: { error: "Unauthorized", code: "unauthorized" } };
    const anon = await feed(undefined);
    expect({ status: anon.status, body: anon.body }).toEqual(UNAUTHORIZED);
    const bad = await feed("cp_live_not_a_key");
    expect({ status: bad.status, body: bad.body }).toEqual(UNAUTHORIZED);
    // Authentication comes first, as on the payment list.
    const badFirst = await feed(undefined, "?limit=0");
    expect({ status: badFirst.status, body: badFirst.body }).toEqual(UNAUTHORIZED);

    for (const id of ["not-a-uuid", randomUUID()]) {
      const res = await svc.http("GET", `/v1/events/${id}`, { apiKey: m.apiKey });
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { error: "Event not found", code: "not_found" } });
    }
  });

  it("a merchant sees its own events only; a Vault event is seen with its vault's key only", async () => {
    const a = await svc.newMerchant({ name: "Shop A" });
    const b = await svc.newMerchant({ name: "Shop B" });
    const paymentA = await cancelled(a);
    const paymentB = await cancelled(b);
    const eventA = (await feed(a.apiKey)).body.data;
    const eventB = (await feed(b.apiKey)).body.data;
    expect(summary(eventA)).toEqual([["payment.cancelled", paymentA]]);
    expect(summary(eventB)).toEqual([["payment.cancelled", paymentB]]);
    // By id: another merchant's event is not found.
    expect((await svc.http("GET", `/v1/events/${eventA[0].id}`, { apiKey: b.apiKey })).status).toBe(404);
    // A's cursor in B's hands gives B's events only.
    expect((await feed(b.apiKey, `?after=${encodeFeedCursor("0")}`)).body.data.map((e: any) => e.id)).toEqual([eventB[0].id]);

    // A vault on A's key: its deposit event (no Vault webhook: not queued for delivery) is in the feed of that key.
    const vault = await svc.http("POST", "/vault/v1/config", {
      apiKey: a.apiKey,
      body: { businessName: "Feed Vault", walletAddress: payout() },
    });
    expect(vault.status, JSON.stringify(vault.body)).toBe(201);
    const vaultId = (await vaultOfCaller(svc.deps, { apiKey: a.apiKey })).id;
    const depositId = randomUUID();
    const data = { depositId, externalUserId: "user-1", amount: "5", status: "completed", timestamp: svc.clock.now() };
    const queued = await withTransaction(svc.deps.db, (c) =>
      enqueueVaultWebhook(c, {
        merchantId: a.id,
        vaultId,
        depositId,
        event: "deposit.completed",
        data,
        dedupeKey: `deposit.completed:${depositId}`,
      }),
    );
    expect(queued).toBe(false);
    const withVault = (await feed(a.apiKey)).body.data;
    expect(withVault.map((e: any) => [e.type, e.kind])).toEqual([
      ["payment.cancelled", "payment"],
      ["deposit.completed", "vault"],
    ]);
    expect(withVault[1].payload).toEqual({ event: "deposit.completed", data, timestamp: data.timestamp });
    // Another key of A: A's payment events, not the vault's; B: neither.
    const second = await createApiKey(svc.deps.db, a.id, "second");
    expect((await feed(second.key)).body.data.map((e: any) => e.id)).toEqual([eventA[0].id]);
    expect((await svc.http("GET", `/v1/events/${withVault[1].id}`, { apiKey: second.key })).status).toBe(404);
    expect((await svc.http("GET", `/v1/events/${withVault[1].id}`, { apiKey: a.apiKey })).body).toEqual(withVault[1]);
    expect((await feed(b.apiKey)).body.data.map((e: any) => e.id)).toEqual([eventB[0].id]);

    // B naming A's vault writes nothing: no event in anyone's feed, no delivery.
    const strangerKey = `deposit.completed:${randomUUID()}`;
    const stranger = await withTransaction(svc.deps.db, (c) =>
      enqueueVaultWebhook(c, {
        merchantId: b.id,
        vaultId,
        depositId: randomUUID(),
        event: "deposit.completed",
        data: { ...data, depositId: randomUUID() },
        dedupeKey: strangerKey,
      }),
    );
    expect(stranger).toBe(false);
    const written = await svc.deps.db.pool.query(
      `SELECT (SELECT count(*)::int FROM event_feed WHERE dedupe_key = $1) AS events,
              (SELECT count(*)::int FROM webhook_deliveries WHERE dedupe_key = $1) AS deliveries`,
      [strangerKey],
    );
    expect(written.rows[0]).toEqual({ events: 0, deliveries: 0 });
    expect((await feed(b.apiKey)).body.data.map((e: any) => e.id)).toEqual([eventB[0].id]);
    expect((await feed(a.apiKey)).body.data.map((e: any) => e.id)).toEqual(withVault.map((e: any) => e.id));
  });
});
