import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createHash, createHmac, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import readline from "node:readline";
import { promisify } from "node:util";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { generateWebhookSecret } from "../../modules/webhooks/index.js";
import { waitFor } from "../helpers/chain.js";
import { startScriptedHttpServer } from "../helpers/scripted-http-server.js";
import { startTestService, type TestService } from "../helpers/service.js";

// The integrator's sandbox of the CLI (cli/sandbox) against the run's stack, processors on: `listen --forward-to`
// follows GET /v1/events and POSTs each event to a local server, signed exactly like a real delivery; `trigger paid`
// creates a payment over the API and pays it on the local Anvil chain; `resend` sends an event again. Signatures are
// recomputed here from the secret (Standard Webhooks HMAC and the spec's X-Signature), not with the service's code.

let svc: TestService;
const children: ChildProcess[] = [];
const servers: { close(): Promise<void> }[] = [];
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  for (const s of servers) await s.close();
  await svc?.stop();
});
vi.setConfig({ testTimeout: 360_000 });

/** The CLI's environment: the test stack's (database, app schema, SECRET_KEY, RPCs, deployments), `extra` on top. */
function cliEnv(extra: Record<string, string | undefined> = {}) {
  const merged: Record<string, string | undefined> = { ...process.env, ...svc.deps.env, ...extra };
  for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];
  return merged as NodeJS.ProcessEnv;
}

/** Runs a CLI command to its end; never rejects. */
async function cli(args: string[], env: Record<string, string | undefined> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", "cli/index.ts", ...args], {
      env: cliEnv(env),
      timeout: 300_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** `listen …` in the background: its JSON lines as they come. */
function startListen(args: string[]) {
  const child = spawn(process.execPath, ["--import", "tsx", "cli/index.ts", "listen", ...args], {
    env: cliEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const lines: any[] = [];
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d.toString()));
  readline.createInterface({ input: child.stdout! }).on("line", (l) => {
    try {
      lines.push(JSON.parse(l));
    } catch {
      lines.push({ text: l });
    }
  });
  return {
    lines,
    line: (match: (l: any) => boolean, timeout = 90_000) =>
      waitFor(async () => lines.find(match), { timeout, interval: 200, what: `a listen line (stderr: ${stderr.slice(-500)})` }),
    stop: () => child.kill("SIGTERM"),
  };
}

/** A JSON-RPC server on 127.0.0.1 answering each method from `answers` (an error for any other); records the methods. */
async function jsonRpcServer(answers: Record<string, unknown>) {
  const methods: string[] = [];
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      const { id, method } = JSON.parse(raw) as { id: number; method: string };
      methods.push(method);
      const reply = method in answers ? { result: answers[method] } : { error: { code: -32601, message: `no ${method}` } };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, ...reply }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const s = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    methods,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(s);
  return s;
}

type Hit = { headers: http.IncomingHttpHeaders; rawBody: string };
/** The integrator's local server: plain HTTP on 127.0.0.1, records every request, answers 200. */
async function localServer() {
  const received: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, rawBody: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const s = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(s);
  return s;
}

const header = (h: Hit, name: string) => h.headers[name] as string;
/** Signed with `secret` in both schemes, recomputed independently; the timestamp is the send time. */
function expectSignedWith(h: Hit, secret: string, scheme: "payment" | "vault" = "payment") {
  const id = header(h, "webhook-id");
  const ts = header(h, "webhook-timestamp");
  expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(600);
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const mac = createHmac("sha256", key).update(`${id}.${ts}.${h.rawBody}`).digest("base64");
  expect(header(h, "webhook-signature")).toBe(`v1,${mac}`);
  const spec = createHash("sha256")
    .update(h.rawBody + secret)
    .digest("hex");
  expect(header(h, scheme === "payment" ? "x-signature" : "x-webhook-signature")).toBe(spec);
  const standard = { "webhook-id": id, "webhook-timestamp": ts, "webhook-signature": header(h, "webhook-signature") };
  expect(() => new Webhook(secret).verify(h.rawBody, standard)).not.toThrow();
  // The check can fail: another secret does not verify.
  expect(() => new Webhook(generateWebhookSecret()).verify(h.rawBody, standard)).toThrow();
}

async function cancelledPayment(apiKey: string): Promise<string> {
  const usdt = svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!.address;
  const res = await svc.http("POST", "/payments", {
    apiKey,
    body: {
      merchant: "0x000000000000000000000000000000000000dEaD",
      chainId: "777177",
      token: usdt,
      amount: "1",
      orderId: `c-${randomUUID()}`,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id = (res.body.url as string).split("/pay/")[1]!;
  expect((await svc.http("POST", `/v1/payments/${id}/cancel`, { apiKey })).status).toBe(200);
  return id;
}

describe("cli sandbox", () => {
  it("listen forwards a triggered payment.completed signed with the merchant's webhook secret; resend sends it again", async () => {
    const m = await svc.newMerchant({ name: "Sandbox shop" });
    // The merchant's real webhook (it delivers nowhere): its secret is what `listen` signs with.
    const hook = await svc.http("PUT", "/v1/webhooks", {
      apiKey: m.apiKey,
      body: { url: "https://127.0.0.1:9/hooks", events: ["payment.completed"] },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const secret = hook.body.data.secret as string;
    expect(secret).toMatch(/^whsec_/);
    const local = await localServer();
    const api = ["--api-url", svc.url, "--api-key", m.apiKey];

    const listen = startListen(["--forward-to", local.url, "--interval", "300", ...api]);
    const ready = await listen.line((l) => l.listening === true);
    expect(ready).toMatchObject({ forwardTo: local.url, from: "now", signing: { payment: "webhook", vault: "session" } });
    expect(ready.sessionSecret).toMatch(/^whsec_/);

    const trig = await cli(["trigger", "paid", "--chain", "777177", "--amount", "5", ...api]);
    expect(trig.code, trig.stderr).toBe(0);
    const out = JSON.parse(trig.stdout);
    expect(out).toMatchObject({ scenario: "paid", chainId: 777177, token: "USDT", amount: "5", expect: ["payment.completed"] });
    expect(out.sent).toMatchObject({ token: "USDT", amount: "5", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    // The create request carried an Idempotency-Key (a retry of it creates nothing more).
    expect(out.idempotencyKey).toBe(`sandbox-trigger:${out.orderId}`);
    const keys = await svc.deps.db.pool.query(`SELECT key FROM idempotency_keys WHERE merchant_id = $1`, [m.id]);
    expect(keys.rows.map((r) => r.key)).toEqual([out.idempotencyKey]);

    const completed = await waitFor(
      async () =>
        local.received.find((h) => {
          const body = JSON.parse(h.rawBody);
          return body.event === "payment.completed" && body.paymentId === out.paymentId;
        }),
      { timeout: 300_000, interval: 500, what: "the forwarded payment.completed" },
    );
    expectSignedWith(completed, secret);
    expect(header(completed, "content-type")).toBe("application/json");
    const id = header(completed, "webhook-id");
    expect(await listen.line((l) => l.forwarded?.id === id)).toEqual({
      forwarded: { id, type: "payment.completed", status: 200, ms: expect.any(Number) },
    });

    // The same event as the real delivery: its id and its bytes.
    const { rows } = await svc.deps.db.pool.query(
      `SELECT id, body FROM webhook_deliveries WHERE payment_id = $1 AND event = 'payment.completed'`,
      [out.paymentId],
    );
    expect(rows).toEqual([{ id, body: completed.rawBody }]);
    const event = await svc.http("GET", `/v1/events/${id}`, { apiKey: m.apiKey });
    expect(event.status).toBe(200);
    expect(event.body.payload).toEqual(JSON.parse(completed.rawBody));

    // resend: to the local server again, the same id and body, signed afresh.
    const before = local.received.length;
    const again = await cli(["resend", id, "--forward-to", local.url, ...api]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ via: "forward", forwarded: { id, type: "payment.completed", status: 200 } });
    expect(local.received.length).toBe(before + 1);
    const resent = local.received.at(-1)!;
    expect(header(resent, "webhook-id")).toBe(id);
    expect(resent.rawBody).toBe(completed.rawBody);
    expectSignedWith(resent, secret);
    listen.stop();
  });

  it("listen --from-start --events forwards earlier events, filtered, signed with --secret", async () => {
    const m = await svc.newMerchant({ name: "Sandbox replay" });
    // No webhook configured at all: the feed has the events anyway.
    const first = await cancelledPayment(m.apiKey);
    const second = await cancelledPayment(m.apiKey);
    const local = await localServer();
    const secret = generateWebhookSecret();
    const listen = startListen([
      "--forward-to",
      local.url,
      "--from-start",
      "--events",
      "payment.cancelled,deposit.*",
      "--secret",
      secret,
      "--interval",
      "300",
      "--api-url",
      svc.url,
      "--api-key",
      m.apiKey,
    ]);
    expect(await listen.line((l) => l.listening === true)).toMatchObject({ from: "start", signing: { payment: "flag", vault: "flag" } });
    await waitFor(async () => local.received.length >= 2, { timeout: 60_000, what: "two forwarded events" });
    expect(local.received.map((h) => JSON.parse(h.rawBody).paymentId)).toEqual([first, second]);
    for (const h of local.received) expectSignedWith(h, secret);
    const feed = await svc.http("GET", "/v1/events", { apiKey: m.apiKey });
    expect(local.received.map((h) => header(h, "webhook-id"))).toEqual(feed.body.data.map((e: any) => e.id));
    listen.stop();
  });

  it("trigger underpaid, overpaid, wrong-token and empty-gas-tank end where their scenario says, read over the API", async () => {
    const m = await svc.newMerchant({ name: "Sandbox scenarios" });
    const api = ["--api-url", svc.url, "--api-key", m.apiKey];
    const runs = await Promise.all(
      ["underpaid", "overpaid", "wrong-token", "empty-gas-tank"].map(async (name) => {
        const r = await cli(["trigger", name, "--chain", "777177", "--amount", "4", ...api]);
        expect(r.code, r.stderr).toBe(0);
        return JSON.parse(r.stdout) as { scenario: string; paymentId: string; orderId: string; sent: { token: string; amount: string } };
      }),
    );
    const [under, over, wrong, gas] = runs.map((r) => r!);
    expect(runs.map((r) => [r.scenario, r.sent.token, r.sent.amount])).toEqual([
      ["underpaid", "USDT", "2"],
      ["overpaid", "USDT", "6"],
      ["wrong-token", "USDC", "4"],
      ["empty-gas-tank", "USDT", "4"],
    ]);
    const listed = async (orderId: string) =>
      (await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(orderId)}`, { apiKey: m.apiKey })).body.data[0];
    const events = async () =>
      ((await svc.http("GET", "/v1/events", { apiKey: m.apiKey })).body.data as any[]).map((e) => [e.type, e.payload]);

    // overpaid: completed with its overpayment; empty-gas-tank: awaiting_gas (a new merchant's Gas Tank is empty).
    const feed = await waitFor(
      async () => {
        const e = await events();
        return e.some(([t, p]) => t === "payment.completed" && p.paymentId === over.paymentId) &&
          e.some(([t, p]) => t === "payment.awaiting_gas" && p.paymentId === gas.paymentId)
          ? e
          : null;
      },
      { timeout: 240_000, interval: 500, what: "payment.completed of overpaid and payment.awaiting_gas of empty-gas-tank" },
    );
    expect(feed.find(([t, p]) => t === "payment.completed" && p.paymentId === over.paymentId)![1]).toMatchObject({
      status: "completed",
      amount: "4",
      overpayment: "2",
    });
    expect((await listed(gas.orderId)).status).toBe("awaiting_gas");

    // underpaid: pending with half received; wrong-token: pending, the USDC listed as unexpected funds. No event of either.
    const half = await waitFor(async () => ((await listed(under.orderId)).receivedAmount === "2" ? listed(under.orderId) : null), {
      timeout: 120_000,
      what: "underpaid's 2 USDT recorded",
    });
    expect(half.status).toBe("pending");
    const foreign = await waitFor(async () => ((await listed(wrong.orderId)).unexpectedFunds.length ? listed(wrong.orderId) : null), {
      timeout: 120_000,
      what: "wrong-token's USDC listed",
    });
    expect(foreign).toMatchObject({ status: "pending", receivedAmount: "0" });
    expect(foreign.unexpectedFunds).toMatchObject([{ symbol: "USDC", amount: "4", recoverable: true }]);
    const after = await events();
    expect(after.filter(([, p]) => p.paymentId === under.paymentId || p.paymentId === wrong.paymentId)).toEqual([]);
  });

  it("trigger refuses anything but a local Anvil of a development chain and a local API, and names the scenarios", async () => {
    const m = await svc.newMerchant({ name: "Sandbox refusals" });
    const api = ["--api-url", svc.url, "--api-key", m.apiKey];
    const geth = await startScriptedHttpServer(() => ({
      status: 200,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, result: "Geth/v1.14.0" }),
    }));
    servers.push(geth);
    const refused = await cli(["trigger", "paid", "--chain", "777177", ...api], { RPC_URL_777177: geth.origin });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`refusing to pay on chain 777177: its RPC ${geth.origin} is "Geth/v1.14.0", not a local Anvil`);
    // Nothing was created.
    const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE merchant_id = $1`, [m.id]);
    expect(rows[0].n).toBe(0);

    // A JSON-RPC server that says it is Anvil but serves another chain (eth_chainId 1).
    const rpc = await jsonRpcServer({ web3_clientVersion: "anvil/v1.2.3", eth_chainId: "0x1" });
    const otherChain = await cli(["trigger", "paid", "--chain", "777177", ...api], { RPC_URL_777177: rpc.url });
    expect(otherChain.code).toBe(1);
    expect(otherChain.stderr).toContain(`refusing to pay on chain 777177: its RPC ${rpc.url} answers chain id "0x1"`);
    // An RPC outside this machine and its private networks: refused before it is contacted.
    const publicRpc = await cli(["trigger", "paid", "--chain", "777177", ...api], { RPC_URL_777177: "http://203.0.113.10:8545" });
    expect(publicRpc.code).toBe(1);
    expect(publicRpc.stderr).toContain(
      "refusing to pay on chain 777177: its RPC http://203.0.113.10:8545 is not on this machine or a private network",
    );
    // Not a development chain (mainnet's id), whatever its RPC.
    const mainnet = await cli(["trigger", "paid", "--chain", "1", ...api], { RPC_URL_1: rpc.url });
    expect(mainnet.code).toBe(1);
    expect(mainnet.stderr).toContain("refusing to pay on chain 1: it is not a development chain (");
    // An API that is not local.
    const remote = await cli(["trigger", "paid", "--chain", "777177", "--api-url", "http://203.0.113.10/api", "--api-key", m.apiKey]);
    expect(remote.code).toBe(1);
    expect(remote.stderr).toContain("refusing to trigger against http://203.0.113.10/api: not an API on this machine or a private network");
    // The native coin is no token to mint.
    const native = await cli(["trigger", "paid", "--chain", "137", "--token", "MATIC", ...api]);
    expect(native.code).toBe(2);
    expect(native.stderr).toContain("--token MATIC is chain 137's native coin: trigger pays ERC-20 tokens only");
    // None of them created anything, and the impostor was asked only who it is.
    const none = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE merchant_id = $1`, [m.id]);
    expect(none.rows[0].n).toBe(0);
    expect(rpc.methods.filter((x) => x !== "web3_clientVersion" && x !== "eth_chainId")).toEqual([]);

    const unknown = await cli(["trigger", "bogus", ...api]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      'Unknown scenario "bogus"; one of: paid, underpaid, overpaid, paid-late, wrong-token, empty-gas-tank, expired',
    );
  });
});
