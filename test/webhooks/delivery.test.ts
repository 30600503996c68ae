import { createHash, randomBytes, randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../api/app.js";
import { withTransaction } from "../../db/client.js";
import { enqueuePaymentWebhook, enqueueVaultWebhook } from "../../modules/webhooks/outbox.js";
import { putVaultWebhookConfig } from "../../modules/webhooks/vault-config.js";
import { createVault } from "../../modules/vault/config.js";
import { vaultOfCaller } from "../../modules/vault/config-access.js";
import { createWebhookDispatcher, type WebhookDispatcher } from "../../modules/webhooks/dispatcher.js";
import { createTestDeps, type TestDeps } from "../helpers/deps.js";
import { enqueuePayment, manualClock, merchantWithKey, paymentPayload } from "./helpers/fixtures.js";
import { startReceiver, type Receiver } from "./helpers/receiver.js";

const MIN = 60_000;
const clock = manualClock();
let deps: TestDeps;
let app: ReturnType<typeof createApp>;
let receiver: Receiver;
let dispatcher: WebhookDispatcher;

beforeAll(async () => {
  deps = await createTestDeps({ now: clock.now });
  app = createApp(deps);
  receiver = await startReceiver();
  dispatcher = createWebhookDispatcher({ tls: { ca: receiver.ca }, log: () => {} });
});
afterAll(async () => {
  await dispatcher?.close();
  await receiver?.close();
  await deps?.cleanup();
});
beforeEach(() => {
  clock.set(Date.now());
  receiver.received.length = 0;
  receiver.setResponder(() => ({ status: 200, body: "ok" }));
});

/** A merchant with a webhook to the receiver, configured through the API. */
async function merchantWithWebhook(body: Record<string, unknown> = {}) {
  const m = await merchantWithKey(deps);
  const res = await app.request("/api/v1/webhooks", {
    method: "PUT",
    headers: { "x-api-key": m.apiKey, "content-type": "application/json" },
    body: JSON.stringify({ url: receiver.url, ...body }),
  });
  const json = (await res.json()) as any;
  expect(res.status).toBe(201);
  return { ...m, secret: json.data.secret as string | null };
}

const api = async (apiKey: string, method: string, path: string, body?: unknown) => {
  const res = await app.request(`/api${path}`, {
    method,
    headers: { "x-api-key": apiKey, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
};

const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");

describe("payment webhook delivery", () => {
  it("delivers the payload signed by the spec's formula and the Standard Webhooks scheme", async () => {
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
    // Standard Webhooks headers, verified by the standardwebhooks package.
    const { rows } = await deps.db.pool.query(`SELECT id FROM webhook_deliveries WHERE payment_id = $1`, [e.paymentId]);
    expect(r.headers["webhook-id"]).toBe(rows[0].id);
    expect(Number(r.headers["webhook-timestamp"])).toBe(Math.floor(clock.now() / 1000));
    expect(new Webhook(m.secret!).verify(r.rawBody, r.headers)).toEqual(e.payload);
    expect(() => new Webhook(m.secret!).verify(r.rawBody.replace("12.5", "99"), r.headers)).toThrow(/No matching signature/);
  });

  it("a standardwebhooks verifier rejects a replay with an old timestamp", async () => {
    const m = await merchantWithWebhook();
    await enqueuePayment(deps, m.merchant.id);
    await dispatcher.run(deps);
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

    // The same event each time: one webhook-id, one body.
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(1);
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
    const detail = await api(m.apiKey, "GET", `/v1/webhooks/deliveries/${list.body.data.deliveries[0].id}`);
    expect(detail.body.data.attemptLog.map((a: any) => [a.attempt, a.httpStatus, a.response, a.at])).toEqual([
      [1, 500, "boom 0", t0],
      [2, 500, "boom 1", t0 + 5 * MIN],
      [3, 200, "thanks", t0 + 15 * MIN],
    ]);
  });

  it("after the third failure the delivery is failed; a manual resend makes one more attempt", async () => {
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
    const d = list.body.data.deliveries.find((x: any) => x.paymentId === paymentId);
    expect(d).toMatchObject({ status: "failed", httpStatus: 503, attempts: 3, response: "down", error: "http 503" });

    receiver.setResponder(() => ({ status: 204 }));
    const resend = await api(m.apiKey, "POST", `/v1/webhooks/deliveries/${d.id}/resend`);
    expect(resend.status).toBe(202);
    expect(resend.body.data).toMatchObject({ status: "pending", attempts: 3, maxAttempts: 4, nextAttemptAt: clock.now() });
    await dispatcher.run(deps);
    expect(receiver.received).toHaveLength(4);
    expect(receiver.received[3]!.headers["webhook-id"]).toBe(d.id);
    const after = await api(m.apiKey, "GET", `/v1/webhooks/deliveries/${d.id}`);
    expect(after.body.data).toMatchObject({ status: "success", httpStatus: 204, attempts: 4 });

    // Someone else's delivery is not found.
    const other = await merchantWithKey(deps, "Other");
    expect((await api(other.apiKey, "POST", `/v1/webhooks/deliveries/${d.id}/resend`)).status).toBe(404);
    expect((await api(other.apiKey, "GET", `/v1/webhooks/deliveries/${d.id}`)).status).toBe(404);
    expect((await api(m.apiKey, "GET", `/v1/webhooks/deliveries?limit=500`)).status).toBe(400);
  });

  it("a regenerated secret signs the pending retries", async () => {
    const m = await merchantWithWebhook();
    receiver.setResponder((_, i) => (i === 0 ? { status: 500 } : { status: 200 }));
    const t0 = clock.now();
    await enqueuePayment(deps, m.merchant.id);
    await dispatcher.run(deps);
    const first = receiver.received[0]!;
    expect(first.headers["x-signature"]).toBe(sha256hex(first.rawBody + m.secret));

    const regen = await api(m.apiKey, "POST", "/v1/webhooks", { action: "regenerate-secret" });
    const fresh = regen.body.data.secret as string;
    expect(fresh).not.toBe(m.secret);
    clock.set(t0 + 5 * MIN);
    await dispatcher.run(deps);
    const retry = receiver.received[1]!;
    expect(retry.rawBody).toBe(first.rawBody);
    expect(retry.headers["x-signature"]).toBe(sha256hex(retry.rawBody + fresh));
    expect(retry.headers["x-signature"]).not.toBe(sha256hex(retry.rawBody + m.secret));
    expect(() => new Webhook(fresh).verify(retry.rawBody, retry.headers)).not.toThrow();
    expect(() => new Webhook(m.secret!).verify(retry.rawBody, retry.headers)).toThrow();
  });

  it("legacy webhooks sign with the API key (X-Signature and raw-key Standard Webhooks)", async () => {
    const m = await merchantWithWebhook({ legacy: true });
    expect(m.secret).toBeNull();
    await enqueuePayment(deps, m.merchant.id);
    await dispatcher.run(deps);
    const r = receiver.received[0]!;
    expect(r.headers["x-signature"]).toBe(sha256hex(r.rawBody + m.apiKey));
    expect(() => new Webhook(m.apiKey, { format: "raw" }).verify(r.rawBody, r.headers)).not.toThrow();
  });

  it("only subscribed events of active webhooks are enqueued; enqueue is idempotent on dedupeKey", async () => {
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
    ).rejects.toThrow(/differs/);
    // Rolled back with the caller's transaction: no event.
    await withTransaction(deps.db, async (c) => {
      await enqueuePaymentWebhook(c, {
        merchantId: m.merchant.id,
        paymentId,
        event: "payment.completed",
        payload,
        dedupeKey: `rolled-back:${paymentId}`,
      });
      throw new Error("state change failed");
    }).catch(() => {});
    const { rows } = await deps.db.pool.query(`SELECT dedupe_key FROM webhook_deliveries WHERE payment_id = $1`, [paymentId]);
    expect(rows.map((r) => r.dedupe_key)).toEqual([`completed:${paymentId}`]);
    // Inactive: nothing.
    await api(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url, isActive: false });
    expect((await enqueuePayment(deps, m.merchant.id, "payment.completed")).written).toBe(false);
  });

  it("payment.awaiting_gas carries its fields and is attempted once (informational, never retried)", async () => {
    const m = await merchantWithWebhook({ events: ["payment.awaiting_gas"] });
    receiver.setResponder(() => ({ status: 500 }));
    const t0 = clock.now();
    const { payload } = await enqueuePayment(deps, m.merchant.id, "payment.awaiting_gas", {
      estimatedFeeUsdt: "0.35",
      gasTankBalance: "0.10",
      requiredTopUp: "0.25",
    });
    for (const t of [t0, t0 + 5 * MIN, t0 + 15 * MIN]) {
      clock.set(t);
      await dispatcher.run(deps);
    }
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.rawBody)).toMatchObject({
      event: "payment.awaiting_gas",
      estimatedFeeUsdt: "0.35",
      gasTankBalance: "0.10",
      requiredTopUp: "0.25",
    });
    expect(payload.status).toBe("awaiting_gas");
    const list = await api(m.apiKey, "GET", "/v1/webhooks/deliveries");
    expect(list.body.data.deliveries[0]).toMatchObject({ status: "failed", attempts: 1, maxAttempts: 1 });
  });

  it("deleting the webhook fails its pending deliveries; an inactive webhook's deliveries fail without a request", async () => {
    const m = await merchantWithWebhook();
    await enqueuePayment(deps, m.merchant.id);
    await api(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url, isActive: false });
    await dispatcher.run(deps);
    expect(receiver.received).toHaveLength(0);
    const list = await api(m.apiKey, "GET", "/v1/webhooks/deliveries");
    expect(list.body.data.deliveries[0]).toMatchObject({ status: "failed", attempts: 0, error: "webhook inactive" });
    // Resend needs an active webhook.
    expect((await api(m.apiKey, "POST", `/v1/webhooks/deliveries/${list.body.data.deliveries[0].id}/resend`)).status).toBe(409);
    await api(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url, isActive: true });
    const second = await enqueuePayment(deps, m.merchant.id);
    await api(m.apiKey, "DELETE", "/v1/webhooks");
    const { rows } = await deps.db.pool.query(`SELECT status, last_error FROM webhook_deliveries WHERE payment_id = $1`, [
      second.paymentId,
    ]);
    expect(rows[0]).toEqual({ status: "failed", last_error: "webhook configuration deleted" });
  });

  it("delivery log pages with a cursor", async () => {
    const m = await merchantWithWebhook();
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      await enqueuePayment(deps, m.merchant.id);
    }
    await dispatcher.run(deps);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api(m.apiKey, "GET", `/v1/webhooks/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.deliveries.map((d: any) => d.id));
      cursor = page.body.data.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    expect((await api(m.apiKey, "GET", `/v1/webhooks/deliveries?cursor=garbage`)).status).toBe(400);
  });
});

describe("failure modes", () => {
  const lastAttempt = async (merchantId: string) =>
    (
      await deps.db.pool.query(
        `SELECT a.* FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.merchant_id = $1 ORDER BY a.id DESC LIMIT 1`,
        [merchantId],
      )
    ).rows[0];

  it("timeout: counted as a failed attempt and retried", async () => {
    const m = await merchantWithWebhook();
    receiver.setResponder(() => "hang");
    const quick = createWebhookDispatcher({ tls: { ca: receiver.ca }, timeoutMs: 300, log: () => {} });
    try {
      await enqueuePayment(deps, m.merchant.id);
      expect((await quick.run(deps)).retrying).toBe(1);
      expect((await lastAttempt(m.merchant.id)).error).toMatch(/^timeout:/);
    } finally {
      await quick.close();
    }
  });

  it("TLS failure when the receiver's certificate is not trusted", async () => {
    const m = await merchantWithWebhook();
    const untrusting = createWebhookDispatcher({ log: () => {} });
    try {
      await enqueuePayment(deps, m.merchant.id);
      expect((await untrusting.run(deps)).retrying).toBe(1);
      expect(receiver.received).toHaveLength(0);
      expect((await lastAttempt(m.merchant.id)).error).toMatch(/^tls:/);
    } finally {
      await untrusting.close();
    }
  });

  it("DNS failure", async () => {
    const m = await merchantWithWebhook();
    await deps.db.pool.query(`UPDATE webhook_configs SET url = 'https://no-such-host.invalid/hook' WHERE merchant_id = $1`, [
      m.merchant.id,
    ]);
    await enqueuePayment(deps, m.merchant.id);
    expect((await dispatcher.run(deps)).retrying).toBe(1);
    expect((await lastAttempt(m.merchant.id)).error).toMatch(/^dns:/);
  });

  it("redirects are not followed", async () => {
    const m = await merchantWithWebhook();
    receiver.setResponder((r) => (r.path === "/hooks" ? { status: 302, headers: { location: "/elsewhere" } } : { status: 200 }));
    await enqueuePayment(deps, m.merchant.id);
    await dispatcher.run(deps);
    expect(receiver.received.map((r) => r.path)).toEqual(["/hooks"]);
    expect(await lastAttempt(m.merchant.id)).toMatchObject({ http_status: 302, error: "http 302" });
  });

  it("caps the response body read and logged", async () => {
    const m = await merchantWithWebhook();
    receiver.setResponder(() => ({ status: 200, body: "x".repeat(2_000_000) }));
    await enqueuePayment(deps, m.merchant.id);
    expect((await dispatcher.run(deps)).succeeded).toBe(1);
    const a = await lastAttempt(m.merchant.id);
    expect(a.response).toBe(`${"x".repeat(1000)}…[truncated]`);
  });

  it("production mode: a private target is refused at send time, even if it got into the database", async () => {
    const prod = await createTestDeps({ now: clock.now, env: { WEBHOOK_ALLOW_PRIVATE: "false" } });
    const d = createWebhookDispatcher({ tls: { ca: receiver.ca }, log: () => {} });
    try {
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
      expect((await d.run(prod)).retrying).toBe(2);
      expect(receiver.received).toHaveLength(0);
      const { rows } = await prod.db.pool.query(`SELECT error FROM webhook_attempts ORDER BY id`);
      expect(rows.map((r) => r.error)).toEqual([
        expect.stringMatching(/^blocked: 127\.0\.0\.1/),
        expect.stringMatching(/^blocked: localhost resolves to 127\.0\.0\.1/),
      ]);
    } finally {
      await d.close();
      await prod.cleanup();
    }
  });
});

describe("vault webhooks", () => {
  // Vault webhooks belong to a vault (one per API key).
  const vaultOf = async (apiKey: string) => {
    // A wallet of its own: a wallet belongs to one business.
    const walletAddress = `0x${randomBytes(20).toString("hex")}`;
    await createVault(deps, { apiKey }, { businessName: "Webhook Shop", walletAddress });
    return vaultOfCaller(deps, { apiKey });
  };
  const data = (depositId: string, status: string) => ({
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
    timestamp: clock.now(),
  });

  it("deposit.* subscription: {event, data, timestamp} signed with X-Webhook-Signature", async () => {
    const m = await merchantWithKey(deps);
    const vault = await vaultOf(m.apiKey);
    const { row } = await putVaultWebhookConfig(
      deps,
      { merchantId: m.merchant.id, vaultId: vault.id },
      { url: receiver.url, events: ["deposit.*"] },
      clock.now(),
    );
    for (const event of ["deposit.completed", "deposit.failed"] as const) {
      const depositId = randomUUID();
      const ok = await withTransaction(deps.db, (c) =>
        enqueueVaultWebhook(c, {
          merchantId: m.merchant.id,
          vaultId: vault.id,
          depositId,
          event,
          data: data(depositId, event.slice(8)),
          dedupeKey: `${event}:${depositId}`,
        }),
      );
      expect(ok).toBe(true);
    }
    await dispatcher.run(deps);
    expect(receiver.received).toHaveLength(2);
    for (const r of receiver.received) {
      const body = JSON.parse(r.rawBody);
      expect(Object.keys(body)).toEqual(["event", "data", "timestamp"]);
      expect(body.timestamp).toBe(clock.now());
      expect(r.headers["x-webhook-signature"]).toBe(sha256hex(r.rawBody + row.secret));
      expect(r.headers["x-signature"]).toBeUndefined();
      expect(() => new Webhook(row.secret!).verify(r.rawBody, r.headers)).not.toThrow();
    }
    expect(receiver.received.map((r) => JSON.parse(r.rawBody).event).sort()).toEqual(["deposit.completed", "deposit.failed"]);
    // The payment delivery log does not list vault deliveries.
    expect((await api(m.apiKey, "GET", "/v1/webhooks/deliveries")).body.data.deliveries).toEqual([]);
  });

  it("only subscribed events; no secret means no signature header", async () => {
    const m = await merchantWithKey(deps);
    const vault = await vaultOf(m.apiKey);
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
          data: data(depositId, "x"),
          dedupeKey: `${event}:${depositId}`,
        }),
      );
    expect(await enqueue("deposit.failed")).toBe(false);
    expect(await enqueue("deposit.completed")).toBe(true);
    await dispatcher.run(deps);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.headers["x-webhook-signature"]).toBeUndefined();
    expect(receiver.received[0]!.headers["webhook-signature"]).toBeUndefined();
    expect(receiver.received[0]!.headers["webhook-id"]).toBeDefined();
  });
});
