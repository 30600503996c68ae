// Webhook delivery throughput: the outbox + dispatcher against raw undici POSTs to the same receiver.
//   npx tsx bench/webhook-throughput.ts [--n 5000] [--concurrency 16] [--replicas 1] [--rounds 3]
// Uses DATABASE_URL when set (a fresh schema, dropped at the end), else an embedded Postgres in
// .data/bench-webhooks/run-<pid> (removed at the end). The receiver is a local HTTPS server (self-signed certificate) in a child
// process, answering 200 at once, so the figures measure the sender side.
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import PQueue from "p-queue";
import { Agent, request } from "undici";
import type { AppDeps } from "../core/deps.js";
import { createDb, withTransaction, type Db } from "../db/client.js";
import { migrate } from "../db/migrate.js";
import { createDeps } from "../app/deps.js";
import { createApiKey, createMerchant } from "../modules/merchants/index.js";
import { putWebhookConfig, createWebhookDispatcher, enqueuePaymentWebhook, webhookHeaders } from "../modules/webhooks/index.js";
import { startEmbeddedPostgres } from "../local/postgres.js";
import { selfSignedCert } from "../test/modules/webhooks/helpers/tls.js";

const { values } = parseArgs({
  options: { n: { type: "string" }, concurrency: { type: "string" }, replicas: { type: "string" }, rounds: { type: "string" } },
});
const N = Number(values.n ?? 5000);
const CONCURRENCY = Number(values.concurrency ?? 16);
const REPLICAS = Number(values.replicas ?? 1);
const ROUNDS = Number(values.rounds ?? 3);

const RECEIVER = `
import https from "node:https";
let n = 0;
const server = https.createServer({ key: process.env.KEY, cert: process.env.CERT, keepAliveTimeout: 30000 }, (req, res) => {
  req.on("data", () => {});
  req.on("end", () => { n++; res.writeHead(200, { "content-type": "text/plain" }); res.end("ok"); });
});
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
process.on("message", () => process.send({ n }));
`;

async function startReceiver(tls: { key: string; cert: string }) {
  const child = spawn(process.execPath, ["--input-type=module", "-e", RECEIVER], {
    env: { ...process.env, KEY: tls.key, CERT: tls.cert },
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once("data", (d) => resolve(JSON.parse(String(d)).port));
    child.once("exit", (c) => reject(new Error(`receiver exited (${c})`)));
  });
  return {
    url: `https://127.0.0.1:${port}/hooks`,
    count: () => new Promise<number>((resolve) => (child.once("message", (m: any) => resolve(m.n)), child.send("count"))),
    stop: () => child.kill(),
  };
}

const fmt = (n: number) => n.toFixed(0).padStart(8);

async function main() {
  let stopPg: (() => Promise<void>) | undefined;
  let url = process.env.DATABASE_URL;
  if (!url) {
    const dataDir = path.resolve(`.data/bench-webhooks/run-${process.pid}`);
    const pg = await startEmbeddedPostgres({ dataDir, persistent: false, fresh: true });
    url = pg.url;
    stopPg = async () => {
      await pg.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
  }
  const schema = `bench_wh_${randomBytes(4).toString("hex")}`;
  const tls = selfSignedCert();
  const receiver = await startReceiver(tls);
  // SECRET_KEY: webhook secrets are stored sealed (a key for this run alone).
  const env = { DATABASE_URL: url, APP_SCHEMA: schema, WEBHOOK_ALLOW_PRIVATE: "true", SECRET_KEY: randomBytes(32).toString("hex") };
  const deps = createDeps({ env });
  const replicaDbs: Db[] = [];
  try {
    await migrate(deps.db);
    const merchant = await createMerchant(deps.db, { name: "bench" });
    const key = await createApiKey(deps.db, merchant.id);
    const cfg = await putWebhookConfig(deps, merchant.id, { url: receiver.url, events: ["payment.completed"] }, key.key, Date.now());
    const secret = cfg.row.secret!;

    const payload = (paymentId: string) => ({
      event: "payment.completed",
      paymentId,
      orderId: `order-${paymentId.slice(0, 8)}`,
      merchant: "0x1111111111111111111111111111111111111111",
      recipientAddress: "0x2222222222222222222222222222222222222222",
      amount: "12.5",
      token: "0x3333333333333333333333333333333333333333",
      chainId: 137,
      status: "completed",
      timestamp: Date.now(),
      transactionHash: `0x${"ab".repeat(32)}`,
      receivedAmount: "12.5",
      terminal: null,
    });

    // Baseline: signed POSTs with undici under the same concurrency bound, no database.
    const agent = new Agent({ connect: { ca: tls.cert }, keepAliveTimeout: 10_000 });
    const raw = async (count: number) => {
      const q = new PQueue({ concurrency: CONCURRENCY });
      const t0 = performance.now();
      for (let i = 0; i < count; i++)
        void q.add(async () => {
          const id = randomUUID();
          const body = JSON.stringify(payload(id));
          const res = await request(receiver.url, {
            method: "POST",
            body,
            dispatcher: agent,
            headers: webhookHeaders({
              scheme: "payment",
              id,
              timestampSeconds: Math.floor(Date.now() / 1000),
              rawBody: body,
              signingKey: secret,
            }),
          });
          await res.body.text();
          if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
        });
      await q.onIdle();
      return performance.now() - t0;
    };

    const enqueue = async (count: number) => {
      const t0 = performance.now();
      for (let i = 0; i < count; i += 500)
        await withTransaction(deps.db, async (client) => {
          for (let j = i; j < Math.min(count, i + 500); j++) {
            const id = randomUUID();
            await enqueuePaymentWebhook(client, {
              merchantId: merchant.id,
              paymentId: id,
              event: "payment.completed",
              payload: payload(id),
              dedupeKey: `bench:${id}`,
            });
          }
        });
      return performance.now() - t0;
    };
    const replicas: { deps: AppDeps; engine: ReturnType<typeof createWebhookDispatcher> }[] = [];
    for (let i = 0; i < REPLICAS; i++) {
      const db = i === 0 ? deps.db : createDb({ url, schema });
      if (i > 0) replicaDbs.push(db);
      replicas.push({ deps: { ...deps, db }, engine: createWebhookDispatcher({ concurrency: CONCURRENCY, tls: { ca: tls.cert } }) });
    }
    const dispatch = async () => {
      const t0 = performance.now();
      const stats = await Promise.all(replicas.map((r) => r.engine.run(r.deps)));
      const delivered = stats.reduce((s, x) => s + x.succeeded, 0);
      return { ms: performance.now() - t0, delivered };
    };

    // Warm-up (TLS sessions, JIT, connection pools).
    await raw(300);
    await enqueue(300);
    await dispatch();

    // Alternate the two measurements; report the median of each (the machine may be shared).
    const rawRates: number[] = [];
    const outboxRates: number[] = [];
    const e2eRates: number[] = [];
    const before = await receiver.count();
    for (let round = 0; round < ROUNDS; round++) {
      const rawMs = await raw(N);
      const enqueueMs = await enqueue(N);
      const d = await dispatch();
      if (d.delivered !== N) throw new Error(`delivered ${d.delivered} of ${N}`);
      rawRates.push((N / rawMs) * 1000);
      outboxRates.push((N / d.ms) * 1000);
      e2eRates.push((N / (enqueueMs + d.ms)) * 1000);
      console.log(
        `  round ${round + 1}: raw ${fmt(rawRates.at(-1)!)}/s  outbox ${fmt(outboxRates.at(-1)!)}/s  enqueue+dispatch ${fmt(e2eRates.at(-1)!)}/s`,
      );
    }
    const received = (await receiver.count()) - before;
    const { rows } = await deps.db.pool.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'success'`);
    if (rows[0].n !== 0) throw new Error(`${rows[0].n} deliveries not successful`);
    if (received !== 2 * N * ROUNDS) throw new Error(`receiver got ${received} requests, expected ${2 * N * ROUNDS}`);

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const rawRate = median(rawRates);
    const outboxRate = median(outboxRates);
    console.log(
      `webhook throughput: ${N} deliveries x ${ROUNDS} rounds, concurrency ${CONCURRENCY}, ${REPLICAS} dispatcher replica(s), local HTTPS receiver (medians)`,
    );
    console.log(`  baseline raw undici POSTs     ${fmt(rawRate)} deliveries/s`);
    console.log(`  outbox dispatcher             ${fmt(outboxRate)} deliveries/s`);
    console.log(`  enqueue + dispatch            ${fmt(median(e2eRates))} deliveries/s`);
    console.log(`  ratio outbox/baseline         ${(outboxRate / rawRate).toFixed(2)}`);
    await agent.close();
    await Promise.all(replicas.map((r) => r.engine.close()));
  } finally {
    receiver.stop();
    await deps.db.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await Promise.all(replicaDbs.map((db) => db.close()));
    await deps.db.close();
    await stopPg?.();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
