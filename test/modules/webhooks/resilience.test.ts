import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { freePort } from "../../../local/ports.js";
import { createWebhookDispatcher } from "../../../modules/webhooks/index.js";
import { waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { enqueuePayment } from "./helpers/fixtures.js";
import { startReceiver, type Received } from "./helpers/receiver.js";
import { selfSignedCert } from "./helpers/tls.js";

// Webhooks survive what happens to the processes around them, on the shared test stack: a receiver that
// is down for the whole retry schedule loses nothing (a manual resend delivers the same event), and a
// dispatcher process killed with SIGKILL mid-batch loses nothing (a restarted one resends what it had in
// flight: duplicates allowed, receivers deduplicate by webhook-id).

vi.setConfig({ testTimeout: 120_000 });
const MIN = 60_000;
/** The dispatcher's default lease of a claimed delivery (modules/webhooks/dispatcher.ts). */
const LEASE_MS = 3 * MIN;
const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");

let svc: TestService;
const children = new Set<import("node:child_process").ChildProcess>();
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && !c.signalCode) c.kill("SIGKILL");
  await svc?.stop();
});

async function merchantWithWebhook(url: string) {
  const m = await svc.newMerchant();
  const res = await svc.http("PUT", "/v1/webhooks", { apiKey: m.apiKey, body: { url } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { ...m, secret: res.body.data.secret as string };
}

/** An HTTPS receiver on a given port (the one a webhook was configured with while nothing listened there). */
async function receiverOn(port: number, tls: { key: string; cert: string }) {
  const received: Received[] = [];
  const server = https.createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({
        headers: req.headers as Record<string, string>,
        rawBody: Buffer.concat(chunks).toString("utf8"),
        path: req.url!,
        at: Date.now(),
      });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));
  return {
    received,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

it("a receiver down for the whole retry schedule: 3 attempts (now, +5, +15 min), failed; a manual resend delivers the same signed event once", async () => {
  const tls = selfSignedCert();
  const port = await freePort(); // nothing listens here: every attempt is refused
  const url = `https://127.0.0.1:${port}/hooks`;
  const m = await merchantWithWebhook(url);
  const clock = svc.clock;
  clock.freeze();
  const dispatcher = createWebhookDispatcher({ tls: { ca: tls.cert }, log: () => {} });
  try {
    const t0 = clock.now();
    const { paymentId, payload } = await enqueuePayment(svc.deps, m.id);
    const { rows } = await svc.deps.db.pool.query(`SELECT id, body FROM webhook_deliveries WHERE payment_id = $1`, [paymentId]);
    const { id, body } = rows[0];
    expect(body).toBe(JSON.stringify(payload));

    expect(await dispatcher.run(svc.deps)).toMatchObject({ claimed: 1, retrying: 1 });
    clock.advance(5 * MIN - 1);
    expect((await dispatcher.run(svc.deps)).claimed).toBe(0);
    clock.advance(1);
    expect(await dispatcher.run(svc.deps)).toMatchObject({ claimed: 1, retrying: 1 });
    clock.advance(10 * MIN - 1);
    expect((await dispatcher.run(svc.deps)).claimed).toBe(0);
    clock.advance(1);
    expect(await dispatcher.run(svc.deps)).toMatchObject({ claimed: 1, failed: 1 });
    clock.advance(60 * MIN); // no automatic attempt after the third
    expect((await dispatcher.run(svc.deps)).claimed).toBe(0);

    const refused = `connection: ECONNREFUSED connect ECONNREFUSED 127.0.0.1:${port}`;
    const detail = await svc.http("GET", `/v1/webhooks/deliveries/${id}`, { apiKey: m.apiKey });
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({
      id,
      paymentId,
      status: "failed",
      httpStatus: null,
      attempts: 3,
      maxAttempts: 3,
      error: refused,
      nextAttemptAt: null,
      deliveredAt: null,
      lastAttemptAt: t0 + 15 * MIN,
    });
    expect(detail.body.data.attemptLog.map((a: any) => [a.attempt, a.url, a.httpStatus, a.error, a.at])).toEqual([
      [1, url, null, refused, t0],
      [2, url, null, refused, t0 + 5 * MIN],
      [3, url, null, refused, t0 + 15 * MIN],
    ]);

    // The receiver comes back on the same address; the merchant resends through the API.
    const receiver = await receiverOn(port, tls);
    try {
      const resend = await svc.http("POST", `/v1/webhooks/deliveries/${id}/resend`, { apiKey: m.apiKey });
      expect(resend.status).toBe(202);
      expect(resend.body.data).toMatchObject({ id, status: "pending", attempts: 3, maxAttempts: 4, nextAttemptAt: clock.now() });
      const sentAt = clock.now();
      expect(sentAt).toBe(t0 + 75 * MIN);
      expect(await dispatcher.run(svc.deps)).toMatchObject({ claimed: 1, succeeded: 1 });
      clock.advance(60 * MIN);
      expect((await dispatcher.run(svc.deps)).claimed).toBe(0);
      expect(receiver.received).toHaveLength(1);
      const r = receiver.received[0]!;
      expect(r.headers["webhook-id"]).toBe(id);
      expect(r.rawBody).toBe(body); // the bytes the event was stored with
      expect(r.headers["x-signature"]).toBe(sha256hex(body + m.secret));
      // The receiver's clock is the service's (75 minutes on): standardwebhooks checks the timestamp too.
      expect(Number(r.headers["webhook-timestamp"])).toBe(Math.floor(sentAt / 1000));
      vi.useFakeTimers({ toFake: ["Date"] });
      try {
        vi.setSystemTime(sentAt);
        expect(new Webhook(m.secret).verify(r.rawBody, r.headers)).toEqual(payload);
      } finally {
        vi.useRealTimers();
      }
    } finally {
      await receiver.close();
    }
    const after = await svc.http("GET", `/v1/webhooks/deliveries/${id}`, { apiKey: m.apiKey });
    expect(after.body.data).toMatchObject({
      status: "success",
      httpStatus: 200,
      attempts: 4,
      error: null,
      deliveredAt: t0 + 75 * MIN,
    });
    expect(after.body.data.attemptLog).toHaveLength(4);
  } finally {
    await dispatcher.close();
    clock.resume();
  }
});

it("a dispatcher process killed (SIGKILL) mid-batch: a restarted one delivers every event, none lost, no row left claimed", async () => {
  // 200-400 ms per answer: with 16 deliveries in flight, 40 events take a few rounds.
  const receiver = await startReceiver({ responder: async (_, i) => (await sleep(200 + ((i * 67) % 201)), { status: 200 }) });
  const caFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "wh-ca-")), "ca.pem");
  fs.writeFileSync(caFile, receiver.ca);
  const m = await merchantWithWebhook(receiver.url);
  const events = [];
  // Real time here (the first test moved the service's clock): the child processes run on real time.
  for (let i = 0; i < 40; i++) events.push(await enqueuePayment({ ...svc.deps, now: Date.now }, m.id));
  const rowsOf = async () =>
    (
      await svc.deps.db.pool.query(
        `SELECT id, payment_id, status, attempts, locked_until, claim_token FROM webhook_deliveries WHERE merchant_id = $1`,
        [m.id],
      )
    ).rows;
  expect((await rowsOf()).map((r) => r.payment_id).sort()).toEqual(events.map((e) => e.paymentId).sort());

  try {
    // First replica: killed once some deliveries are recorded while others are in flight.
    const a = dispatcherProcess({ WEBHOOK_TEST_CA_FILE: caFile });
    await Promise.race([
      waitFor(async () => (await rowsOf()).filter((r) => r.status === "success").length >= 8, {
        timeout: 60_000,
        interval: 10,
        what: "8 recorded deliveries",
      }),
      a.exited.then((c) => Promise.reject(new Error(`dispatcher exited early (${c}): ${a.stderr()}`))),
    ]);
    a.child.kill("SIGKILL");
    expect(await a.exited).toBe("SIGKILL");
    const killedAt = Date.now();

    const seenBeforeKill = receiver.received.map((r) => r.headers["webhook-id"]!);
    const atKill = await rowsOf();
    const recorded = atKill.filter((r) => r.status === "success");
    const inHand = atKill.filter((r) => r.status !== "success");
    expect(seenBeforeKill.length).toBeLessThan(40); // killed mid-batch: not everything had been sent
    expect(seenBeforeKill.length).toBeGreaterThan(recorded.length); // and some were in flight
    // What the killed process held stays claimed until its lease ends, and no longer.
    for (const r of inHand) {
      expect(r).toMatchObject({ status: "pending", attempts: 0 });
      expect(r.claim_token).not.toBeNull();
      expect(r.locked_until.getTime()).toBeGreaterThan(killedAt);
      expect(r.locked_until.getTime()).toBeLessThanOrEqual(killedAt + LEASE_MS);
    }

    // Second replica, its clock past the dead one's leases (3 minutes later).
    const b = dispatcherProcess({ WEBHOOK_TEST_CA_FILE: caFile, CLOCK_OFFSET_MS: String(LEASE_MS + 1000) });
    await Promise.race([
      waitFor(async () => (await rowsOf()).every((r) => r.status === "success"), {
        timeout: 60_000,
        interval: 50,
        what: "every delivery success",
      }),
      b.exited.then((c) => Promise.reject(new Error(`dispatcher exited early (${c}): ${b.stderr()}`))),
    ]);
    b.child.kill("SIGTERM");
    expect(await b.exited, b.stderr()).toBe(0);

    // Every event reached the receiver; an event sent to the killed process and not recorded came twice.
    const end = await rowsOf();
    expect(end.map((r) => [r.status, r.attempts, r.locked_until, r.claim_token])).toEqual(end.map(() => ["success", 1, null, null]));
    const count = new Map<string, number>();
    for (const r of receiver.received) count.set(r.headers["webhook-id"]!, (count.get(r.headers["webhook-id"]!) ?? 0) + 1);
    for (const r of recorded) expect(count.get(r.id), r.id).toBe(1);
    for (const r of inHand) {
      // Seen before the kill: sent again. Not seen: sent once more, or its last bytes were still on the way.
      if (seenBeforeKill.includes(r.id)) expect(count.get(r.id), r.id).toBe(2);
      else expect([1, 2], r.id).toContain(count.get(r.id));
    }
    expect([...count.keys()].sort()).toEqual(end.map((r) => r.id).sort());
    const duplicates = receiver.received.length - end.length;
    const attempts = await svc.deps.db.pool.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE http_status = 200)::int AS ok FROM webhook_attempts a
         JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.merchant_id = $1`,
      [m.id],
    );
    expect(attempts.rows[0]).toEqual({ n: 40, ok: 40 }); // the killed process's sends were never recorded
    const beat = await svc.deps.db.pool.query(`SELECT updated_at, value FROM processor_state WHERE key = 'heartbeat:webhook-dispatcher'`);
    expect(beat.rows[0].updated_at.getTime()).toBeGreaterThan(killedAt - 1000);
    expect(beat.rows[0].value.error).toBeNull();
    console.log(
      `[webhooks resilience] 40 events; at SIGKILL ${recorded.length} recorded, ${seenBeforeKill.length} received, ` +
        `${inHand.length} in hand; after restart ${receiver.received.length} requests: ${duplicates} duplicate(s), 0 lost`,
    );
  } finally {
    await receiver.close();
  }
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function dispatcherProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", "test/modules/webhooks/helpers/run-dispatcher.ts"], {
    env: { ...process.env, ...svc.deps.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let stderr = "";
  child.stdout.resume();
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
  return { child, exited, stderr: () => stderr };
}
