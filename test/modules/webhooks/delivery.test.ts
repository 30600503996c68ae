import { createHash, randomBytes, randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { createApp } from "../../../api/app.js";
import { withTransaction } from "../../../db/client.js";
import {
  enqueuePaymentWebhook,
  enqueueVaultWebhook,
  putVaultWebhookConfig,
  createWebhookDispatcher,
} from "../../../modules/webhooks/index.js";
import { createVault, vaultOfCaller } from "../../../modules/vault/index.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { enqueuePayment, manualClock, merchantWithKey, paymentPayload } from "./helpers/fixtures.js";
import { startReceiver } from "./helpers/receiver.js";
import { selfSignedCert } from "./helpers/tls.js";

const MIN = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** One certificate for every test's receiver (one openssl run); each receiver still has a port of its own. */
let cert: { key: string; cert: string };
beforeAll(() => {
  cert = selfSignedCert();
});

/**
 * What one test works with, its own: an app schema (a dispatcher pass claims every due delivery of its schema, so a
 * shared one would let this test's retries, made due by another test's clock, be sent or counted there), a receiver
 * on a port of its own, a dispatcher trusting it and a clock. Everything is closed when the test ends.
 */
async function scene(opts: { env?: Record<string, string> } = {}) {
  const closers: (() => Promise<void>)[] = [];
  onTestFinished(async () => {
    for (const close of closers.reverse()) await close();
  });
  const clock = manualClock();
  const deps = await createTestDeps({ now: clock.now, env: opts.env });
  closers.push(() => deps.cleanup());
  const receiver = await startReceiver({ cert });
  closers.push(() => receiver.close());
  const dispatcher = createWebhookDispatcher({ tls: { ca: receiver.ca }, log: () => {} });
  closers.push(() => dispatcher.close());
  const app = createApp(deps);

  const api = async (apiKey: string, method: string, path: string, body?: unknown) => {
    const res = await app.request(`/api${path}`, {
      method,
      headers: { "x-api-key": apiKey, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  /** A merchant with a webhook to this test's receiver, configured through the API. */
  const merchantWithWebhook = async (body: Record<string, unknown> = {}) => {
    const m = await merchantWithKey(deps);
    const res = await api(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { ...m, secret: res.body.data.secret as string | null };
  };

  /** The ids of a payment's deliveries (the outbox rows), as the database has them. */
  const deliveryIds = async (paymentId: string) =>
    (await deps.db.pool.query(`SELECT id FROM webhook_deliveries WHERE payment_id = $1 ORDER BY created_at`, [paymentId])).rows.map(
      (r) => r.id as string,
    );

  return { clock, deps, app, receiver, dispatcher, api, merchantWithWebhook, deliveryIds };
}

/** The spec's error body of /v1/webhooks*. */
const failure = (status: number, error: string) => ({ status, body: { success: false, error, data: null } });

const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");

describe("payment webhook delivery", () => {
  it("delivers the payload signed by the spec's formula and the Standard Webhooks scheme", async () => {
    const { clock, deps, receiver, dispatcher, merchantWithWebhook, deliveryIds } = await scene();
    const m = await merchantWithWebhook();
    const e = await enqueuePayment(deps, m.merchant.id, "payment.completed", {
      transactionHash: "0xabc",
      receivedAmount: "12.5",
      terminal: null,
    });
    expect(e.written).toBe(true);
    const stats = await dispatcher.run(deps);
    expect(stats).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(receiver.received).toHaveLength(1);
    const r = receiver.received[0]!;
    expect(r.headers["content-type"]).toBe("application/json");
    // Receiver side: the spec's check over the raw body.
    expect(r.headers["x-signature"]).toBe(sha256hex(r.rawBody + m.secret));
    expect(r.headers["x-signature"]).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(r.rawBody)).toEqual(e.payload);
    expect(r.rawBody).toBe(JSON.stringify(e.payload)); // the caller's field order is kept
    // Standard Webhooks headers, verified by the standardwebhooks package. webhook-id is the outbox row's id.
    const ids = await deliveryIds(e.paymentId);
    expect(ids).toHaveLength(1);
    expect(r.headers["webhook-id"]).toBe(ids[0]);
    expect(r.headers["webhook-id"]).toMatch(UUID);
    expect(Number(r.headers["webhook-timestamp"])).toBe(Math.floor(clock.now() / 1000));
    expect(new Webhook(m.secret!).verify(r.rawBody, r.headers)).toEqual(e.payload);
    expect(() => new Webhook(m.secret!).verify(r.rawBody.replace("12.5", "99"), r.headers)).toThrow(/No matching signature/);
  });

  it("a standardwebhooks verifier rejects a replay with an old timestamp", async () => {
    const { deps, receiver, dispatcher, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook();
    await enqueuePayment(deps, m.merchant.id);
    expect(await dispatcher.run(deps)).toMatchObject({ claimed: 1, succeeded: 1 });
    const r = receiver.received[0]!;
    const wh = new Webhook(m.secret!);
    expect(() => wh.verify(r.rawBody, r.headers)).not.toThrow();
    // The same request replayed 10 minutes later.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 10 * MIN);
      expect(() => wh.verify(r.rawBody, r.headers)).toThrow(/timestamp too old/);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a receiver failing twice then succeeding gets three attempts: now, +5 min, +10 min", async () => {
    const { clock, deps, receiver, dispatcher, api, merchantWithWebhook, deliveryIds } = await scene();
    const m = await merchantWithWebhook();
    receiver.setResponder((_, i) => (i < 2 ? { status: 500, body: `boom ${i}` } : { status: 200, body: "thanks" }));
    const t0 = clock.now();
    const { paymentId } = await enqueuePayment(deps, m.merchant.id);

    expect((await dispatcher.run(deps)).retrying).toBe(1);
    expect(receiver.received).toHaveLength(1);
    clock.set(t0 + 5 * MIN - 1);
    expect((await dispatcher.run(deps)).claimed).toBe(0);
    clock.set(t0 + 5 * MIN);
    expect((await dispatcher.run(deps)).retrying).toBe(1);
    expect(receiver.received).toHaveLength(2);
    clock.set(t0 + 15 * MIN - 1);
    expect((await dispatcher.run(deps)).claimed).toBe(0);
    clock.set(t0 + 15 * MIN);
    expect((await dispatcher.run(deps)).succeeded).toBe(1);
    expect(receiver.received).toHaveLength(3);
    clock.set(t0 + 60 * MIN);
    expect((await dispatcher.run(deps)).claimed).toBe(0);

    // The same event each time: one webhook-id (the delivery's), one body.
    const [id] = await deliveryIds(paymentId);
    expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([id, id, id]);
    expect(new Set(receiver.received.map((r) => r.rawBody)).size).toBe(1);
    expect(receiver.received.map((r) => Number(r.headers["webhook-timestamp"]))).toEqual(
      [t0, t0 + 5 * MIN, t0 + 15 * MIN].map((t) => Math.floor(t / 1000)),
    );

    // Delivery log over the API.
    const list = await api(m.apiKey, "GET", `/v1/webhooks/deliveries?paymentId=${paymentId}`);
    expect(list.status).toBe(200);
    expect(list.body.data.hasMore).toBe(false);
    expect(list.body.data.deliveries).toEqual([
      expect.objectContaining({
        id,
        paymentId,
        event: "payment.completed",
        status: "success",
        httpStatus: 200,
        attempts: 3,
        response: "thanks",
        nextAttemptAt: null,
        deliveredAt: t0 + 15 * MIN,
      }),
    ]);
    const detail = await api(m.apiKey, "GET", `/v1/webhooks/deliveries/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.data.attemptLog.map((a: any) => [a.attempt, a.httpStatus, a.response, a.at])).toEqual([
      [1, 500, "boom 0", t0],
      [2, 500, "boom 1", t0 + 5 * MIN],
      [3, 200, "thanks", t0 + 15 * MIN],
    ]);
  });

  it("after the third failure the delivery is failed; a manual resend makes one more attempt", async () => {
    const { clock, deps, receiver, dispatcher, api, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook();
    receiver.setResponder(() => ({ status: 503, body: "down" }));
    const t0 = clock.now();
    const { paymentId } = await enqueuePayment(deps, m.merchant.id);
    for (const t of [t0, t0 + 5 * MIN, t0 + 15 * MIN, t0 + 60 * MIN, t0 + 600 * MIN]) {
      clock.set(t);
      await dispatcher.run(deps);
    }
    expect(receiver.received).toHaveLength(3);
    const list = await api(m.apiKey, "GET", `/v1/webhooks/deliveries?status=failed`);
    expect(list.status).toBe(200);
    expect(list.body.data.deliveries).toHaveLength(1);
    const d = list.body.data.deliveries[0];
    expect(d).toMatchObject({ paymentId, status: "failed", httpStatus: 503, attempts: 3, response: "down", error: "http 503" });

    receiver.setResponder(() => ({ status: 204 }));
    const resend = await api(m.apiKey, "POST", `/v1/webhooks/deliveries/${d.id}/resend`);
    expect(resend.status).toBe(202);
    expect(resend.body.data).toMatchObject({ status: "pending", attempts: 3, maxAttempts: 4, nextAttemptAt: clock.now() });
    expect(await dispatcher.run(deps)).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(receiver.received).toHaveLength(4);
    expect(receiver.received[3]!.headers["webhook-id"]).toBe(d.id);
    const after = await api(m.apiKey, "GET", `/v1/webhooks/deliveries/${d.id}`);
    expect(after.body.data).toMatchObject({ status: "success", httpStatus: 204, attempts: 4 });

    // Someone else's delivery is not found.
    const other = await merchantWithKey(deps, "Other");
    expect(await api(other.apiKey, "POST", `/v1/webhooks/deliveries/${d.id}/resend`)).toEqual(failure(404, "Delivery not found"));
    expect(await api(other.apiKey, "GET", `/v1/webhooks/deliveries/${d.id}`)).toEqual(failure(404, "Delivery not found"));
    expect(await api(m.apiKey, "GET", `/v1/webhooks/deliveries?limit=500`)).toEqual(failure(400, "limit must be an integer from 1 to 100"));
  });

  it("a regenerated secret signs the pending retries", async () => {
    const { clock, deps, receiver, dispatcher, api, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook();
    receiver.setResponder((_, i) => (i === 0 ? { status: 500 } : { status: 200 }));
    const t0 = clock.now();
    await enqueuePayment(deps, m.merchant.id);
    expect((await dispatcher.run(deps)).retrying).toBe(1);
    const first = receiver.received[0]!;
    expect(first.headers["x-signature"]).toBe(sha256hex(first.rawBody + m.secret));

    const regen = await api(m.apiKey, "POST", "/v1/webhooks", { action: "regenerate-secret" });
    expect(regen.status).toBe(200);
    const fresh = regen.body.data.secret as string;
    expect(fresh).not.toBe(m.secret);
    clock.set(t0 + 5 * MIN);
    expect((await dispatcher.run(deps)).succeeded).toBe(1);
    const retry = receiver.received[1]!;
    expect(retry.rawBody).toBe(first.rawBody);
    expect(retry.headers["x-signature"]).toBe(sha256hex(retry.rawBody + fresh));
    expect(retry.headers["x-signature"]).not.toBe(sha256hex(retry.rawBody + m.secret));
    expect(() => new Webhook(fresh).verify(retry.rawBody, retry.headers)).not.toThrow();
    expect(() => new Webhook(m.secret!).verify(retry.rawBody, retry.headers)).toThrow(/No matching signature/);
  });

  it("refreshBody: the body is brought up to date once, before the first attempt; stored, signed, and resent as is", async () => {
    const { clock, deps, receiver, merchantWithWebhook, deliveryIds } = await scene();
    const calls: string[] = [];
    let state = "fulfilled";
    const dispatcher = createWebhookDispatcher({
      tls: { ca: receiver.ca },
      log: () => {},
      refreshBody: async (_db, d) => {
        calls.push(d.event);
        const body = JSON.parse(d.body);
        return body.bridge.status === state ? null : JSON.stringify({ ...body, bridge: { ...body.bridge, status: state } });
      },
    });
    onTestFinished(() => dispatcher.close());
    const m = await merchantWithWebhook();
    receiver.setResponder((_, i) => (i === 0 ? { status: 500 } : { status: 200 }));
    const t0 = clock.now();
    const e = await enqueuePayment(deps, m.merchant.id, "payment.completed", { bridge: { orderId: "0x01", status: "created" } });
    expect((await dispatcher.run(deps)).retrying).toBe(1);
    const first = receiver.received[0]!;
    expect(JSON.parse(first.rawBody)).toEqual({ ...e.payload, bridge: { orderId: "0x01", status: "fulfilled" } });
    expect(Object.keys(JSON.parse(first.rawBody))).toEqual(Object.keys(e.payload)); // the field order is kept
    expect(first.headers["x-signature"]).toBe(sha256hex(first.rawBody + m.secret));
    const [id] = await deliveryIds(e.paymentId);
    const stored = await deps.db.pool.query(
      `SELECT d.body AS delivery, f.body AS feed FROM webhook_deliveries d JOIN event_feed f ON f.id = d.id WHERE d.id = $1`,
      [id],
    );
    expect(stored.rows[0]).toEqual({ delivery: first.rawBody, feed: first.rawBody });
    // The state moves on again: the retry still sends the first attempt's bytes (never refreshed after an attempt).
    state = "claimed_unlock";
    clock.set(t0 + 5 * MIN);
    expect((await dispatcher.run(deps)).succeeded).toBe(1);
    expect(receiver.received[1]!.rawBody).toBe(first.rawBody);
    expect(calls).toEqual(["payment.completed"]);
  });

  it("legacy webhooks sign with the API key (X-Signature and raw-key Standard Webhooks)", async () => {
    const { deps, receiver, dispatcher, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook({ legacy: true });
    expect(m.secret).toBeNull();
    await enqueuePayment(deps, m.merchant.id);
    expect((await dispatcher.run(deps)).succeeded).toBe(1);
    const r = receiver.received[0]!;
    expect(r.headers["x-signature"]).toBe(sha256hex(r.rawBody + m.apiKey));
    expect(() => new Webhook(m.apiKey, { format: "raw" }).verify(r.rawBody, r.headers)).not.toThrow();
  });

  it("only subscribed events of active webhooks are enqueued; enqueue is idempotent on dedupeKey", async () => {
    const { clock, deps, receiver, api, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook({ events: ["payment.completed", "payment.awaiting_gas"] });
    expect((await enqueuePayment(deps, m.merchant.id, "payment.expired")).written).toBe(false);
    const paymentId = randomUUID();
    const payload = paymentPayload("payment.completed", paymentId, clock.now());
    const enqueue = () =>
      withTransaction(deps.db, (c) =>
        enqueuePaymentWebhook(c, {
          merchantId: m.merchant.id,
          paymentId,
          event: "payment.completed",
          payload,
          dedupeKey: `completed:${paymentId}`,
        }),
      );
    expect(await enqueue()).toBe(true);
    expect(await enqueue()).toBe(false);
    await expect(
      withTransaction(deps.db, (c) =>
        enqueuePaymentWebhook(c, { merchantId: m.merchant.id, paymentId, event: "payment.failed", payload, dedupeKey: `x:${paymentId}` }),
      ),
    ).rejects.toThrow("webhook payload.event (payment.completed) differs from event payment.failed");
    // Rolled back with the caller's transaction: no event. The enqueue itself succeeds; the state change after it fails.
    await expect(
      withTransaction(deps.db, async (c) => {
        const written = await enqueuePaymentWebhook(c, {
          merchantId: m.merchant.id,
          paymentId,
          event: "payment.completed",
          payload,
          dedupeKey: `rolled-back:${paymentId}`,
        });
        expect(written).toBe(true);
        throw new Error("state change failed");
      }),
    ).rejects.toThrow(/^state change failed$/);
    const { rows } = await deps.db.pool.query(`SELECT dedupe_key FROM webhook_deliveries WHERE payment_id = $1`, [paymentId]);
    expect(rows.map((r) => r.dedupe_key)).toEqual([`completed:${paymentId}`]);
    // Inactive: nothing.
    expect((await api(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url, isActive: false })).status).toBe(200);
    expect((await enqueuePayment(deps, m.merchant.id, "payment.completed")).written).toBe(false);
  });

  it("payment.awaiting_gas carries its fields and is attempted once (informational, never retried)", async () => {
    const { clock, deps, receiver, dispatcher, api, merchantWithWebhook, deliveryIds } = await scene();
    const m = await merchantWithWebhook({ events: ["payment.awaiting_gas"] });
    receiver.setResponder(() => ({ status: 500 }));
    const t0 = clock.now();
    const { paymentId, payload } = await enqueuePayment(deps, m.merchant.id, "payment.awaiting_gas", {
      estimatedFeeUsdt: "0.35",
      gasTankBalance: "0.10",
      requiredTopUp: "0.25",
    });
    const runs = [];
    for (const t of [t0, t0 + 5 * MIN, t0 + 15 * MIN]) {
      clock.set(t);
      runs.push(await dispatcher.run(deps));
    }
    expect(runs.map((r) => [r.claimed, r.failed])).toEqual([
      [1, 1],
      [0, 0],
      [0, 0],
    ]);
    expect(receiver.received).toHaveLength(1);
    // What was sent: the event's body, byte for byte, with its status and its own fields.
    const sent = receiver.received[0]!;
    expect(sent.rawBody).toBe(JSON.stringify(payload));
    expect(JSON.parse(sent.rawBody)).toMatchObject({
      event: "payment.awaiting_gas",
      status: "awaiting_gas",
      estimatedFeeUsdt: "0.35",
      gasTankBalance: "0.10",
      requiredTopUp: "0.25",
    });
    const list = await api(m.apiKey, "GET", "/v1/webhooks/deliveries");
    expect(list.body.data.deliveries).toEqual([
      expect.objectContaining({
        id: (await deliveryIds(paymentId))[0],
        event: "payment.awaiting_gas",
        status: "failed",
        httpStatus: 500,
        error: "http 500",
        attempts: 1,
        maxAttempts: 1,
        nextAttemptAt: null,
      }),
    ]);
  });

  it("deleting the webhook fails its pending deliveries; an inactive webhook's deliveries fail without a request", async () => {
    const { deps, receiver, dispatcher, api, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook();
    await enqueuePayment(deps, m.merchant.id);
    expect((await api(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url, isActive: false })).status).toBe(200);
    expect(await dispatcher.run(deps)).toMatchObject({ claimed: 1, skipped: 1 });
    expect(receiver.received).toHaveLength(0);
    const list = await api(m.apiKey, "GET", "/v1/webhooks/deliveries");
    expect(list.body.data.deliveries).toHaveLength(1);
    expect(list.body.data.deliveries[0]).toMatchObject({ status: "failed", attempts: 0, error: "webhook inactive" });
    // Resend needs an active webhook.
    expect(await api(m.apiKey, "POST", `/v1/webhooks/deliveries/${list.body.data.deliveries[0].id}/resend`)).toEqual(
      failure(409, "No active webhook is configured for this delivery"),
    );
    expect((await api(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url, isActive: true })).status).toBe(200);
    const second = await enqueuePayment(deps, m.merchant.id);
    expect(await api(m.apiKey, "DELETE", "/v1/webhooks")).toEqual({
      status: 200,
      body: { success: true, error: null, data: { deleted: true } },
    });
    const { rows } = await deps.db.pool.query(`SELECT status, last_error FROM webhook_deliveries WHERE payment_id = $1`, [
      second.paymentId,
    ]);
    expect(rows).toEqual([{ status: "failed", last_error: "webhook configuration deleted" }]);
  });

  it("delivery log pages with a cursor", async () => {
    const { clock, deps, dispatcher, api, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook();
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      created.push((await enqueuePayment(deps, m.merchant.id)).paymentId);
    }
    expect(await dispatcher.run(deps)).toMatchObject({ claimed: 5, succeeded: 5 });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api(m.apiKey, "GET", `/v1/webhooks/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.deliveries.map((d: any) => d.paymentId));
      cursor = page.body.data.nextCursor;
    } while (cursor);
    // Newest first, each once.
    expect(seen).toEqual([...created].reverse());
    expect(await api(m.apiKey, "GET", `/v1/webhooks/deliveries?cursor=garbage`)).toEqual(failure(400, "invalid cursor"));
  });
});

describe("failure modes", () => {
  const lastAttempt = async (deps: TestDeps, merchantId: string) =>
    (
      await deps.db.pool.query(
        `SELECT a.* FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.merchant_id = $1 ORDER BY a.id DESC LIMIT 1`,
        [merchantId],
      )
    ).rows[0];

  it("timeout: counted as a failed attempt and retried", async () => {
    const { deps, receiver, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook();
    receiver.setResponder(() => "hang");
    const quick = createWebhookDispatcher({ tls: { ca: receiver.ca }, timeoutMs: 300, log: () => {} });
    try {
      await enqueuePayment(deps, m.merchant.id);
      expect((await quick.run(deps)).retrying).toBe(1);
      expect(receiver.received).toHaveLength(1);
      expect((await lastAttempt(deps, m.merchant.id)).error).toMatch(/^timeout:/);
    } finally {
      await quick.close();
    }
  });

  it("TLS failure when the receiver's certificate is not trusted", async () => {
    const { deps, receiver, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook();
    const untrusting = createWebhookDispatcher({ log: () => {} });
    try {
      await enqueuePayment(deps, m.merchant.id);
      expect((await untrusting.run(deps)).retrying).toBe(1);
      expect(receiver.received).toHaveLength(0);
      expect((await lastAttempt(deps, m.merchant.id)).error).toMatch(/^tls:/);
    } finally {
      await untrusting.close();
    }
  });

  it("DNS failure", async () => {
    const { deps, receiver, dispatcher, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook();
    await deps.db.pool.query(`UPDATE webhook_configs SET url = 'https://no-such-host.invalid/hook' WHERE merchant_id = $1`, [
      m.merchant.id,
    ]);
    await enqueuePayment(deps, m.merchant.id);
    expect((await dispatcher.run(deps)).retrying).toBe(1);
    expect(receiver.received).toHaveLength(0);
    expect((await lastAttempt(deps, m.merchant.id)).error).toMatch(/^dns:/);
  });

  it("redirects are not followed", async () => {
    const { deps, receiver, dispatcher, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook();
    receiver.setResponder((r) => (r.path === "/hooks" ? { status: 302, headers: { location: "/elsewhere" } } : { status: 200 }));
    await enqueuePayment(deps, m.merchant.id);
    expect((await dispatcher.run(deps)).retrying).toBe(1);
    expect(receiver.received.map((r) => r.path)).toEqual(["/hooks"]);
    expect(await lastAttempt(deps, m.merchant.id)).toMatchObject({ http_status: 302, error: "http 302" });
  });

  it("caps the response body read and logged", async () => {
    const { deps, receiver, dispatcher, merchantWithWebhook } = await scene();
    const m = await merchantWithWebhook();
    receiver.setResponder(() => ({ status: 200, body: "x".repeat(2_000_000) }));
    await enqueuePayment(deps, m.merchant.id);
    expect((await dispatcher.run(deps)).succeeded).toBe(1);
    const a = await lastAttempt(deps, m.merchant.id);
    expect(a.response).toBe(`${"x".repeat(1000)}…[truncated]`);
  });

  it("production mode: a private target is refused at send time, even if it got into the database", async () => {
    const { deps: prod, receiver, dispatcher } = await scene({ env: { WEBHOOK_ALLOW_PRIVATE: "false" } });
    const m = await merchantWithKey(prod);
    await prod.db.pool.query(`INSERT INTO webhook_configs (merchant_id, url, events, secret) VALUES ($1, $2, $3, 'whsec_x')`, [
      m.merchant.id,
      receiver.url,
      ["payment.completed"],
    ]);
    await enqueuePayment(prod, m.merchant.id);
    // A hostname resolving to loopback is refused by the connection's DNS check.
    const m2 = await merchantWithKey(prod);
    await prod.db.pool.query(`INSERT INTO webhook_configs (merchant_id, url, events, secret) VALUES ($1, $2, $3, 'whsec_x')`, [
      m2.merchant.id,
      `https://localhost:${receiver.port}/hooks`,
      ["payment.completed"],
    ]);
    await enqueuePayment(prod, m2.merchant.id);
    expect((await dispatcher.run(prod)).retrying).toBe(2);
    expect(receiver.received).toHaveLength(0);
    expect((await lastAttempt(prod, m.merchant.id)).error).toMatch(/^blocked: 127\.0\.0\.1/);
    expect((await lastAttempt(prod, m2.merchant.id)).error).toMatch(/^blocked: localhost resolves to 127\.0\.0\.1/);
  });
});

describe("vault webhooks", () => {
  // Vault webhooks belong to a vault (one per API key).
  const vaultOf = async (deps: TestDeps, apiKey: string) => {
    // A wallet of its own: a wallet belongs to one business.
    const walletAddress = `0x${randomBytes(20).toString("hex")}`;
    await createVault(deps, { apiKey }, { businessName: "Webhook Shop", walletAddress });
    return vaultOfCaller(deps, { apiKey });
  };
  const data = (depositId: string, status: string, timestamp: number) => ({
    depositId,
    externalUserId: "user-1",
    amount: "1000000",
    fee: "2500",
    netAmount: "997500",
    tokenSymbol: "USDT",
    tokenAddress: "0x4444444444444444444444444444444444444444",
    chainId: 777177,
    depositAddress: "0x5555555555555555555555555555555555555555",
    status,
    depositTxHash: "0xdep",
    processTxHash: status === "completed" ? "0xproc" : null,
    timestamp,
  });
  /** The outbox row of a deposit's delivery, as the database has it. */
  const deliveryIdOf = async (deps: TestDeps, depositId: string) => {
    const { rows } = await deps.db.pool.query(`SELECT id FROM webhook_deliveries WHERE deposit_id = $1`, [depositId]);
    expect(rows).toHaveLength(1);
    return rows[0].id as string;
  };

  it("deposit.* subscription: {event, data, timestamp} signed with X-Webhook-Signature", async () => {
    const { clock, deps, receiver, dispatcher, api } = await scene();
    const m = await merchantWithKey(deps);
    const vault = await vaultOf(deps, m.apiKey);
    const { row } = await putVaultWebhookConfig(
      deps,
      { merchantId: m.merchant.id, vaultId: vault.id },
      { url: receiver.url, events: ["deposit.*"] },
      clock.now(),
    );
    const deposits = new Map<string, string>(); // event -> depositId
    for (const event of ["deposit.completed", "deposit.failed"] as const) {
      const depositId = randomUUID();
      deposits.set(event, depositId);
      const ok = await withTransaction(deps.db, (c) =>
        enqueueVaultWebhook(c, {
          merchantId: m.merchant.id,
          vaultId: vault.id,
          depositId,
          event,
          data: data(depositId, event.slice(8), clock.now()),
          dedupeKey: `${event}:${depositId}`,
        }),
      );
      expect(ok).toBe(true);
    }
    expect(await dispatcher.run(deps)).toMatchObject({ claimed: 2, succeeded: 2 });
    expect(receiver.received).toHaveLength(2);
    for (const r of receiver.received) {
      const body = JSON.parse(r.rawBody);
      expect(Object.keys(body)).toEqual(["event", "data", "timestamp"]);
      expect(body.timestamp).toBe(clock.now());
      expect(body.data.depositId).toBe(deposits.get(body.event));
      expect(r.headers["webhook-id"]).toBe(await deliveryIdOf(deps, body.data.depositId));
      expect(r.headers["x-webhook-signature"]).toBe(sha256hex(r.rawBody + row.secret));
      expect(r.headers["x-signature"]).toBeUndefined();
      expect(() => new Webhook(row.secret!).verify(r.rawBody, r.headers)).not.toThrow();
    }
    expect(receiver.received.map((r) => JSON.parse(r.rawBody).event).sort()).toEqual(["deposit.completed", "deposit.failed"]);
    // The payment delivery log does not list vault deliveries.
    expect(await api(m.apiKey, "GET", "/v1/webhooks/deliveries")).toEqual({
      status: 200,
      body: { success: true, error: null, data: { deliveries: [], nextCursor: null, hasMore: false } },
    });
  });

  it("only subscribed events; no secret means no signature header", async () => {
    const { clock, deps, receiver, dispatcher } = await scene();
    const m = await merchantWithKey(deps);
    const vault = await vaultOf(deps, m.apiKey);
    await putVaultWebhookConfig(
      deps,
      { merchantId: m.merchant.id, vaultId: vault.id },
      { url: receiver.url, events: ["deposit.completed"], secret: null },
      clock.now(),
    );
    const depositId = randomUUID();
    const enqueue = (event: "deposit.completed" | "deposit.failed") =>
      withTransaction(deps.db, (c) =>
        enqueueVaultWebhook(c, {
          merchantId: m.merchant.id,
          vaultId: vault.id,
          depositId,
          event,
          data: data(depositId, "x", clock.now()),
          dedupeKey: `${event}:${depositId}`,
        }),
      );
    expect(await enqueue("deposit.failed")).toBe(false);
    expect(await enqueue("deposit.completed")).toBe(true);
    expect(await dispatcher.run(deps)).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(receiver.received).toHaveLength(1);
    const r = receiver.received[0]!;
    expect(r.headers["x-webhook-signature"]).toBeUndefined();
    expect(r.headers["webhook-signature"]).toBeUndefined();
    // Unsigned, but still identified: webhook-id is the delivery's outbox row id.
    expect(r.headers["webhook-id"]).toMatch(UUID);
    expect(r.headers["webhook-id"]).toBe(await deliveryIdOf(deps, depositId));
    expect(Number(r.headers["webhook-timestamp"])).toBe(Math.floor(clock.now() / 1000));
  });
});
