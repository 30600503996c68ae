import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseUnits } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startMetricsServer } from "../../../api/metrics-server.js";
import { startApiServer } from "../../../api/server.js";
import { allProcessors } from "../../../processors/index.js";
import { startProcessors, type ProcessorRunner } from "../../../processors/runner.js";
import { webhookDispatcher, type WebhookDispatcherProcessor } from "../../../processors/webhook-dispatcher.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { startReceiver, type Receiver } from "../../modules/webhooks/helpers/receiver.js";

// GET /metrics after a payment went the whole way (created over HTTP, paid on Anvil, indexed, detected, settled
// by the factory, its payment.completed webhook delivered): the counters of each step are non-zero, labels are
// route patterns, and the endpoint is closed to anyone without the token (or, without one, off this host).
// The service runs every processor, with a webhook dispatcher that trusts the test receiver's certificate.

vi.setConfig({ testTimeout: 240_000 });
const WAIT = 150_000;
const CHAIN = 777177;
const TOKEN = randomBytes(24).toString("hex");

let receiver: Receiver;
let svc: TestService;
let dispatcher: WebhookDispatcherProcessor;
let runner: ProcessorRunner;
let origin: string;

beforeAll(async () => {
  receiver = await startReceiver();
  svc = await startTestService({ processors: false, env: { METRICS_TOKEN: TOKEN } });
  origin = svc.url.replace(/\/api$/, "");
  dispatcher = webhookDispatcher({ tls: { ca: receiver.ca }, log: () => {} });
  const processors = allProcessors().map((p) => (p.name === dispatcher.name ? dispatcher : p));
  runner = startProcessors(svc.deps, processors, () => {});
});
afterAll(async () => {
  await runner?.stop();
  await dispatcher?.close();
  await svc?.stop();
  await receiver?.close();
});

async function scrape(headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }, base = origin) {
  const res = await fetch(`${base}/metrics`, { headers });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

/** Sum of the samples of `name` whose labels include every pair of `labels` (Prometheus text format). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  let found = false;
  for (const line of text.split("\n")) {
    const m = line.match(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) {
      sum += Number(m[3]);
      found = true;
    }
  }
  return found ? sum : NaN;
}

describe("GET /metrics", () => {
  it("after a payment completes and its webhook is delivered: creation, detection, settlement and delivery counted", async () => {
    const m = await svc.newMerchant({ name: "Metrics shop" });
    const hook = await svc.http("PUT", "/v1/webhooks", { apiKey: m.apiKey, body: { url: receiver.url } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);

    const h = chainHelpers(svc.deps.chains.find((c) => c.chainId === CHAIN)!);
    const merchant = privateKeyToAccount(generatePrivateKey()).address;
    const created = await svc.http("POST", "/payments", {
      apiKey: m.apiKey,
      body: { merchant, chainId: String(CHAIN), token: h.token("USDT").address, amount: "2", gasless: true, orderId: "metrics-1" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const paymentId = (created.body.url as string).split("/pay/")[1]!;
    const { rows } = await svc.deps.db.pool.query(`SELECT recipient_address FROM payments WHERE id = $1`, [paymentId]);
    await h.pay("USDT", rows[0].recipient_address, parseUnits("2", 6));

    await waitFor(() => Promise.resolve(receiver.received.some((r) => JSON.parse(r.rawBody).paymentId === paymentId)), {
      timeout: WAIT,
      interval: 250,
      what: `the webhook of payment ${paymentId}`,
    });
    // The delivery is counted once its attempt is recorded, a moment after the receiver has it.
    const ch = { chain_id: String(CHAIN) };
    const text = await waitFor(
      async () => {
        const s = await scrape();
        return sample(s.text, "chainpay_webhook_deliveries_total", { kind: "payment", outcome: "success" }) >= 1 && s.text;
      },
      { timeout: 30_000, interval: 250, what: "the delivery counted" },
    );

    expect(sample(text, "chainpay_payments_created_total", ch)).toBeGreaterThanOrEqual(1);
    expect(sample(text, "chainpay_payments_paid_total", ch)).toBeGreaterThanOrEqual(1);
    expect(sample(text, "chainpay_payment_detection_seconds_count", ch)).toBeGreaterThanOrEqual(1);
    expect(sample(text, "chainpay_payment_detection_seconds_sum", ch)).toBeGreaterThan(0);
    expect(sample(text, "chainpay_settlements_total", { ...ch, outcome: "mined" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "chainpay_settlement_gas_used_sum", ch)).toBeGreaterThan(21_000);
    expect(sample(text, "chainpay_settlement_batch_size_count", ch)).toBeGreaterThanOrEqual(1);
    expect(sample(text, "chainpay_webhook_deliveries_total", { kind: "payment", outcome: "success" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "chainpay_webhook_attempt_duration_seconds_count", { kind: "payment" })).toBeGreaterThanOrEqual(1);

    // Latency per route pattern: the creation under /api/payments, never a path holding the payment's id.
    expect(
      sample(text, "chainpay_http_request_duration_seconds_count", { method: "POST", route: "/api/payments", status: "200" }),
    ).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(paymentId);

    // Processor loops, and the gauges read at scrape time.
    for (const p of ["detector", "settler", "webhook-dispatcher"])
      expect(sample(text, "chainpay_processor_pass_duration_seconds_count", { processor: p })).toBeGreaterThan(0);
    for (const source of ["indexer", "webhook_queue", "gas_tank", "withdrawals", "settler", "settlement", "rpc", "prices"])
      expect(sample(text, "chainpay_metrics_source_up", { source })).toBe(1);
    expect(sample(text, "chainpay_payments_withdraw_requests")).toBe(0);
    expect(sample(text, "chainpay_payments_withdraw_request_oldest_seconds")).toBe(0);
    expect(sample(text, "chainpay_indexer_lag_blocks", ch)).toBeGreaterThanOrEqual(0);
    expect(sample(text, "chainpay_indexer_block", ch)).toBeGreaterThan(0);
    expect(sample(text, "chainpay_webhook_queue_pending")).toBeGreaterThanOrEqual(0);
    expect(sample(text, "chainpay_settler_balance", ch)).toBeGreaterThan(0);
    // Settled: nothing waits, and the settlement's nonce was timed from its first version to its receipt.
    expect(sample(text, "chainpay_tx_time_to_mine_seconds_count", ch)).toBeGreaterThanOrEqual(1);
    expect(sample(text, "chainpay_tx_oldest_pending_seconds", ch)).toBe(0);
    expect(sample(text, "chainpay_tx_at_fee_cap", ch)).toBe(0);
    // The providers and the native coin's price every gas fee is converted with.
    expect(sample(text, "chainpay_rpc_provider_state", { chain_id: "137", state: "ok" })).toBe(1);
    expect(sample(text, "chainpay_rpc_provider_in_use", { chain_id: "137" })).toBe(1);
    expect(sample(text, "chainpay_price_available", { chain_id: "137", symbol: "MATIC" })).toBe(1);
    expect(
      sample(text, "chainpay_price_age_seconds", { chain_id: "137", symbol: "MATIC", source: "trusted_oracle" }),
    ).toBeGreaterThanOrEqual(0);
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    console.log(
      `[measure] detection ${sample(text, "chainpay_payment_detection_seconds_sum", ch).toFixed(2)} s, settlement gas ` +
        `${sample(text, "chainpay_settlement_gas_used_sum", ch)} for ${sample(text, "chainpay_settlement_batch_size_sum", ch)} payment(s)`,
    );
  });

  it("is Prometheus text, and refused without the bearer token (401) or with a wrong one", async () => {
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.text).toMatch(/^# HELP chainpay_/m);
    expect((await scrape({})).status).toBe(401);
    expect((await scrape({ authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
    expect((await scrape({ authorization: TOKEN })).status).toBe(401);
  });

  it("without METRICS_TOKEN: answered to a direct connection from this host only, not through a proxy", async () => {
    const api = await startApiServer({ ...svc.deps, config: { ...svc.deps.config, METRICS_TOKEN: undefined } }, 0);
    try {
      const base = `http://127.0.0.1:${api.port}`;
      expect((await scrape({}, base)).status).toBe(200);
      expect((await scrape({ "x-forwarded-for": "203.0.113.7" }, base)).status).toBe(403);
      expect((await scrape({ forwarded: "for=203.0.113.7" }, base)).status).toBe(403);
    } finally {
      await api.close();
    }
  });

  it("without METRICS_TOKEN in production: the API port refuses even a local connection (a proxy may hide the client)", async () => {
    const config = { ...svc.deps.config, METRICS_TOKEN: undefined, NODE_ENV: "production" };
    const api = await startApiServer({ ...svc.deps, config }, 0);
    try {
      expect((await scrape({}, `http://127.0.0.1:${api.port}`)).status).toBe(403);
    } finally {
      await api.close();
    }
  });

  it("METRICS_PORT: a listener of /metrics alone, guarded by its bind address and the token when set", async () => {
    const open = await startMetricsServer({ ...svc.deps, config: { ...svc.deps.config, METRICS_TOKEN: undefined } }, 0, "127.0.0.1");
    const guarded = await startMetricsServer(svc.deps, 0, "127.0.0.1");
    try {
      const o = `http://127.0.0.1:${open.port}`;
      const g = `http://127.0.0.1:${guarded.port}`;
      const res = await scrape({ "x-forwarded-for": "203.0.113.7" }, o);
      expect(res.status).toBe(200);
      expect(res.text).toContain("chainpay_processor_pass_duration_seconds");
      expect((await fetch(`${o}/api/health`)).status).toBe(404);
      expect((await scrape({}, g)).status).toBe(401);
      expect((await scrape(undefined, g)).status).toBe(200);
    } finally {
      await open.close();
      await guarded.close();
    }
  });
});
