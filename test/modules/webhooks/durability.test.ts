import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import type { AppDeps } from "../../../core/deps.js";
import { createDb, withTransaction } from "../../../db/client.js";
import { bodySignature, enqueuePaymentWebhook, createWebhookDispatcher, putWebhookConfig } from "../../../modules/webhooks/index.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { manualClock, merchantWithKey, paymentPayload } from "./helpers/fixtures.js";
import { startReceiver, type Receiver } from "./helpers/receiver.js";

const MIN = 60_000;
const clock = manualClock();
let deps: TestDeps;
let receiver: Receiver;

beforeAll(async () => {
  deps = await createTestDeps({ now: clock.now });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await deps?.cleanup();
});
beforeEach(() => {
  clock.set(Date.now());
  receiver.received.length = 0;
  receiver.setResponder(() => ({ status: 200 }));
});

async function merchantWithWebhook() {
  const m = await merchantWithKey(deps);
  const r = await putWebhookConfig(deps, m.merchant.id, { url: receiver.url }, m.apiKey, clock.now());
  return { ...m, secret: r.row.secret! };
}

async function enqueueMany(merchantId: string, n: number, perTx = 100): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += perTx) {
    await withTransaction(deps.db, async (client) => {
      for (let j = i; j < Math.min(n, i + perTx); j++) {
        const paymentId = randomUUID();
        ids.push(paymentId);
        await enqueuePaymentWebhook(client, {
          merchantId,
          paymentId,
          event: "payment.completed",
          payload: paymentPayload("payment.completed", paymentId, clock.now()),
          dedupeKey: `completed:${paymentId}`,
        });
      }
    });
  }
  return ids;
}

it("a dispatcher killed mid-delivery: the deliveries are resent after restart (duplicates allowed, none lost)", async () => {
  const m = await merchantWithWebhook();
  const paymentIds = await enqueueMany(m.merchant.id, 5);
  receiver.setResponder(() => "hang"); // requests arrive, no response ever comes

  const caFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "wh-ca-")), "ca.pem");
  fs.writeFileSync(caFile, receiver.ca);
  const child = spawn(process.execPath, ["--import", "tsx", "test/modules/webhooks/helpers/dispatcher-child.ts"], {
    env: { ...process.env, ...deps.env, WEBHOOK_TEST_CA_FILE: caFile },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
  await Promise.race([receiver.waitFor(5), exited.then((c) => Promise.reject(new Error(`child exited early (${c}): ${stderr}`)))]);
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");

  // Claimed, in flight, nothing recorded.
  const before = await deps.db.pool.query(`SELECT status, attempts, locked_until FROM webhook_deliveries WHERE merchant_id = $1`, [
    m.merchant.id,
  ]);
  expect(before.rows).toHaveLength(5);
  for (const r of before.rows) {
    expect(r).toMatchObject({ status: "pending", attempts: 0 });
    expect(r.locked_until.getTime()).toBeGreaterThan(Date.now());
  }

  // A restarted dispatcher respects the lease, then takes the rows over once it expires.
  receiver.setResponder(() => ({ status: 200 }));
  const restarted = createWebhookDispatcher({ tls: { ca: receiver.ca }, log: () => {} });
  try {
    expect((await restarted.run(deps)).claimed).toBe(0);
    clock.set(Date.now() + 3 * MIN + 1000); // past the default 3-minute lease
    expect((await restarted.run(deps)).succeeded).toBe(5);
  } finally {
    await restarted.close();
  }
  const ids = receiver.received.map((r) => r.headers["webhook-id"]);
  expect(ids).toHaveLength(10);
  expect(new Set(ids).size).toBe(5); // each event twice: once to the killed process, once after restart
  const after = await deps.db.pool.query(`SELECT payment_id, status FROM webhook_deliveries WHERE merchant_id = $1`, [m.merchant.id]);
  expect(after.rows.every((r) => r.status === "success")).toBe(true);
  expect(after.rows.map((r) => r.payment_id).sort()).toEqual([...paymentIds].sort());
});

it("1,000 events through two replicas and a flaky receiver: all delivered, none lost, no attempt sent twice", async () => {
  const m = await merchantWithWebhook();
  const t0 = clock.now();
  const paymentIds = await enqueueMany(m.merchant.id, 1000);
  const failedOnce = new Set<string>();
  let n = 0;
  // One event in 7 fails its first attempt (500) and succeeds on the retry 5 minutes later.
  receiver.setResponder((r) => {
    const id = r.headers["webhook-id"]!;
    if (!failedOnce.has(id) && n++ % 7 === 3) return (failedOnce.add(id), { status: 500 });
    return { status: 200 };
  });

  // A second replica: its own pool and engine on the same tables.
  const db2 = createDb({ url: deps.env.DATABASE_URL!, schema: deps.db.schema });
  const replica: AppDeps = { ...deps, db: db2 };
  const a = createWebhookDispatcher({ tls: { ca: receiver.ca }, concurrency: 16, log: () => {} });
  const b = createWebhookDispatcher({ tls: { ca: receiver.ca }, concurrency: 16, log: () => {} });
  const started = performance.now();
  try {
    for (const t of [t0, t0 + 5 * MIN, t0 + 15 * MIN]) {
      clock.set(t);
      await Promise.all([a.run(deps), b.run(replica)]);
    }
  } finally {
    await Promise.all([a.close(), b.close(), db2.close()]);
  }
  const elapsed = performance.now() - started;

  const { rows } = await deps.db.pool.query(`SELECT id, payment_id, status, attempts FROM webhook_deliveries WHERE merchant_id = $1`, [
    m.merchant.id,
  ]);
  expect(rows).toHaveLength(1000);
  expect(rows.filter((r) => r.status !== "success")).toEqual([]);
  expect(rows.map((r) => r.payment_id).sort()).toEqual([...paymentIds].sort());

  // Every attempt recorded was sent exactly once, and the receiver saw every event.
  const totalAttempts = rows.reduce((s, r) => s + r.attempts, 0);
  const ours = new Set(rows.map((r) => r.id));
  const received = receiver.received.filter((r) => ours.has(r.headers["webhook-id"]!));
  expect(received).toHaveLength(totalAttempts);
  const perId = new Map<string, number>();
  for (const r of received) perId.set(r.headers["webhook-id"]!, (perId.get(r.headers["webhook-id"]!) ?? 0) + 1);
  expect(perId.size).toBe(1000);
  for (const r of rows) expect(perId.get(r.id)).toBe(r.attempts);
  const logged = await deps.db.pool.query(
    `SELECT count(*)::int AS n, count(DISTINCT (delivery_id, attempt))::int AS d FROM webhook_attempts a JOIN webhook_deliveries w ON w.id = a.delivery_id WHERE w.merchant_id = $1`,
    [m.merchant.id],
  );
  expect(logged.rows[0]).toEqual({ n: totalAttempts, d: totalAttempts });
  expect(totalAttempts).toBeGreaterThan(1100);
  for (const r of received.slice(0, 50)) expect(r.headers["x-signature"]).toBe(bodySignature(r.rawBody, m.secret));
  console.log(`[webhooks] 1000 events, ${totalAttempts} attempts, 2 replicas: ${Math.round(elapsed)} ms`);
});
