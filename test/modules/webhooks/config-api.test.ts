import { createHash, createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createApp } from "../../../api/app.js";
import { createApiKey } from "../../../modules/merchants/index.js";
import { createWebhookDispatcher, HTTP_LOOPBACK_ERROR } from "../../../modules/webhooks/index.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { enqueuePayment, merchantWithKey, storedPlaintext } from "./helpers/fixtures.js";
import { startReceiver, type Received } from "./helpers/receiver.js";
import { selfSignedCert } from "./helpers/tls.js";

// Every test has a merchant (and, when it delivers, a receiver) of its own: none reads what another left behind.
let deps: TestDeps;
let app: ReturnType<typeof createApp>;
let cert: { key: string; cert: string };

beforeAll(async () => {
  deps = await createTestDeps();
  app = createApp(deps);
  cert = selfSignedCert();
});
afterAll(async () => {
  await deps?.cleanup();
});

const call = async (key: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await app.request(`/api${path}`, {
    method,
    headers: { ...(key ? { "x-api-key": key } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

/** The spec's error body of /v1/webhooks, with its status. */
const failure = (status: number, error: string) => ({ status, body: { success: false, error, data: null } });
const NOT_CONFIGURED = failure(404, "Webhook not configured");

/** A fresh merchant with an API key. */
const newMerchant = async () => {
  const m = await merchantWithKey(deps);
  return { apiKey: m.apiKey, merchantId: m.merchant.id };
};

/** A fresh merchant whose webhook was just created by PUT (201): the created view, whole secret included. */
async function merchantWithWebhook(body: Record<string, unknown> = { url: "https://example.com/hook" }) {
  const m = await newMerchant();
  const r = await call(m.apiKey, "PUT", "/v1/webhooks", body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { ...m, created: r.body.data };
}

/** An HTTPS receiver of this test's own, closed when the test ends. */
async function receiverForTest() {
  const receiver = await startReceiver({ cert });
  onTestFinished(() => receiver.close());
  return receiver;
}

/**
 * One payment event of the merchant through the outbox and a dispatcher pass; returns the request the receiver got for
 * it, after checking its `webhook-id` is the outbox row's id.
 */
async function deliverOne(merchantId: string, receiver: Awaited<ReturnType<typeof receiverForTest>>): Promise<Received> {
  const before = receiver.received.length;
  const e = await enqueuePayment(deps, merchantId);
  expect(e.written).toBe(true);
  const dispatcher = createWebhookDispatcher({ tls: { ca: receiver.ca }, log: () => {} });
  try {
    await dispatcher.run(deps);
  } finally {
    await dispatcher.close();
  }
  expect(receiver.received).toHaveLength(before + 1);
  const r = receiver.received[before]!;
  const { rows } = await deps.db.pool.query(`SELECT id, status FROM webhook_deliveries WHERE payment_id = $1`, [e.paymentId]);
  expect(rows).toEqual([{ id: r.headers["webhook-id"], status: "success" }]);
  expect(r.rawBody).toBe(JSON.stringify(e.payload));
  return r;
}

/**
 * The Standard Webhooks signature, computed here from the scheme (not with the service's signer): `v1,` + base64
 * HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{raw body}`; the key is the base64 after `whsec_` of a
 * secret, or the UTF-8 bytes of a legacy webhook's API key.
 */
function expectedStandardSignature(signingKey: string, r: Received): string {
  const key = signingKey.startsWith("whsec_") ? Buffer.from(signingKey.slice("whsec_".length), "base64") : Buffer.from(signingKey, "utf8");
  const mac = createHmac("sha256", key).update(`${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.rawBody}`);
  return `v1,${mac.digest("base64")}`;
}

/** The request was signed with `signingKey`, in both schemes (Standard Webhooks and the spec's X-Signature). */
function expectSignedWith(r: Received, signingKey: string) {
  expect(r.headers["webhook-signature"]).toBe(expectedStandardSignature(signingKey, r));
  expect(r.headers["x-signature"]).toBe(
    createHash("sha256")
      .update(r.rawBody + signingKey)
      .digest("hex"),
  );
}

describe("/v1/webhooks", () => {
  it("401 with the envelope without a valid key", async () => {
    for (const method of ["GET", "PUT", "POST", "DELETE"]) {
      expect(await call(null, method, "/v1/webhooks")).toEqual(failure(401, "Unauthorized"));
      expect(await call("cp_live_wrong", method, "/v1/webhooks")).toEqual(failure(401, "Unauthorized"));
    }
    expect(await call(null, "GET", "/v1/webhooks/deliveries")).toEqual(failure(401, "Unauthorized"));
  });

  it("GET before configuration: 404", async () => {
    const { apiKey } = await newMerchant();
    expect(await call(apiKey, "GET", "/v1/webhooks")).toEqual(NOT_CONFIGURED);
    expect(await call(apiKey, "POST", "/v1/webhooks", { action: "regenerate-secret" })).toEqual(NOT_CONFIGURED);
    expect(await call(apiKey, "DELETE", "/v1/webhooks")).toEqual(NOT_CONFIGURED);
  });

  it("rejects HTTP, bad URLs, unknown events and bad fields", async () => {
    const { apiKey } = await newMerchant();
    const put = (body: unknown) => call(apiKey, "PUT", "/v1/webhooks", body);
    expect(await put({ url: "http://example.com/hook" })).toEqual(failure(400, "Webhook URL must use HTTPS (http:// is not accepted)"));
    expect(await put({ url: "nope" })).toEqual(failure(400, "url is not a valid URL"));
    expect(await put({})).toEqual(failure(400, "url is required"));
    expect(await put({ url: "https://example.com/hook", events: ["payment.completed", "payment.refunded"] })).toEqual(
      failure(
        400,
        "Unknown event: payment.refunded. Subscribable events: payment.completed, payment.withdrawn, payment.awaiting_gas, payment.failed, payment.expired, payment.reorged, payment.cancelled, payment.sanctioned",
      ),
    );
    expect(await put({ url: "https://example.com/hook", events: [] })).toEqual(failure(400, "events must contain at least one event"));
    expect(await put({ url: "https://example.com/hook", isActive: "yes" })).toEqual(failure(400, "isActive must be a boolean"));
    expect(await put({ url: "https://example.com/hook", secret: "whsec_mine" })).toEqual(failure(400, "Unknown field: secret"));
    expect(await put("{not json")).toEqual(failure(400, "Invalid JSON body"));
    // Nothing was saved.
    expect(await call(apiKey, "GET", "/v1/webhooks")).toEqual(NOT_CONFIGURED);
  });

  it("PUT creates: 201, default events, whole secret once; the secret signs its deliveries", async () => {
    const receiver = await receiverForTest();
    const { apiKey, merchantId } = await newMerchant();
    const r = await call(apiKey, "PUT", "/v1/webhooks", { url: receiver.url });
    expect(r.status).toBe(201);
    expect(r.body.success).toBe(true);
    expect(r.body.error).toBeNull();
    const created = r.body.data;
    expect(created).toEqual({
      id: expect.any(String),
      url: receiver.url,
      events: ["payment.completed", "payment.withdrawn"],
      isActive: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      signing: "secret",
      legacyApiKeyPrefix: null,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    expect(Buffer.from(created.secret.slice("whsec_".length), "base64")).toHaveLength(32);
    // The secret shown is the one the deliveries are signed with.
    expectSignedWith(await deliverOne(merchantId, receiver), created.secret);
  });

  it("GET masks the secret", async () => {
    const { apiKey, created } = await merchantWithWebhook();
    const r = await call(apiKey, "GET", "/v1/webhooks");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, error: null, data: { ...created, secret: `whsec_********${created.secret.slice(-4)}` } });
    expect(JSON.stringify(r.body)).not.toContain(created.secret);
  });

  it("PUT updates only the given fields and keeps the secret (masked)", async () => {
    const { apiKey, merchantId, created } = await merchantWithWebhook();
    const r = await call(apiKey, "PUT", "/v1/webhooks", {
      url: "https://example.org/new",
      events: ["payment.failed", "payment.expired"],
      isActive: false,
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      id: created.id,
      url: "https://example.org/new",
      events: ["payment.failed", "payment.expired"],
      isActive: false,
      secret: `whsec_********${created.secret.slice(-4)}`,
    });
    const again = await call(apiKey, "PUT", "/v1/webhooks", { url: "https://example.org/new" });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ events: ["payment.failed", "payment.expired"], isActive: false });
    expect(await storedPlaintext(deps, "webhook_configs.secret", merchantId)).toBe(created.secret);
  });

  it("POST regenerate-secret: new secret at once, the next delivery is signed with it; other actions and content types refused", async () => {
    const receiver = await receiverForTest();
    const { apiKey, merchantId, created } = await merchantWithWebhook({ url: receiver.url });
    expect(await call(apiKey, "POST", "/v1/webhooks", { action: "rotate" })).toEqual(
      failure(400, 'Unknown action; expected {"action": "regenerate-secret"}'),
    );
    expect(
      await call(apiKey, "POST", "/v1/webhooks", JSON.stringify({ action: "regenerate-secret" }), { "content-type": "text/plain" }),
    ).toEqual(failure(415, "Content-Type must be application/json"));
    const r = await call(apiKey, "POST", "/v1/webhooks", { action: "regenerate-secret" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, error: null, data: { secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) } });
    const fresh = r.body.data.secret as string;
    expect(fresh).not.toBe(created.secret);
    expect(await storedPlaintext(deps, "webhook_configs.secret", merchantId)).toBe(fresh);
    expect((await call(apiKey, "GET", "/v1/webhooks")).body.data.secret).toBe(`whsec_********${fresh.slice(-4)}`);
    // At once: the next delivery carries the new secret's signature, and not the old one's.
    const delivered = await deliverOne(merchantId, receiver);
    expectSignedWith(delivered, fresh);
    expect(delivered.headers["webhook-signature"]).not.toBe(expectedStandardSignature(created.secret, delivered));
  });

  it("legacy:true is refused on a webhook with a secret", async () => {
    const { apiKey } = await merchantWithWebhook();
    expect(await call(apiKey, "PUT", "/v1/webhooks", { url: "https://example.org/new", legacy: true })).toEqual(
      failure(409, "This webhook signs with a dedicated secret; it cannot be switched back to API-key (legacy) signing"),
    );
  });

  it("DELETE", async () => {
    const { apiKey } = await merchantWithWebhook();
    expect(await call(apiKey, "DELETE", "/v1/webhooks")).toEqual({
      status: 200,
      body: { success: true, error: null, data: { deleted: true } },
    });
    expect(await call(apiKey, "GET", "/v1/webhooks")).toEqual(NOT_CONFIGURED);
    expect(await call(apiKey, "DELETE", "/v1/webhooks")).toEqual(NOT_CONFIGURED);
  });

  it("legacy webhook: created with {legacy: true}, signs with the request's API key; regenerate upgrades it", async () => {
    const receiver = await receiverForTest();
    const { apiKey, merchantId } = await newMerchant();
    const r = await call(apiKey, "PUT", "/v1/webhooks", { url: receiver.url, legacy: true });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ secret: null, signing: "api-key", legacyApiKeyPrefix: apiKey.slice(0, 12) });
    expect(await storedPlaintext(deps, "webhook_configs.secret", merchantId)).toBeNull();
    expect(await storedPlaintext(deps, "webhook_configs.legacy_api_key", merchantId)).toBe(apiKey);
    expect(JSON.stringify((await call(apiKey, "GET", "/v1/webhooks")).body)).not.toContain(apiKey);
    // What it promises: the deliveries are signed with that API key.
    expectSignedWith(await deliverOne(merchantId, receiver), apiKey);
    expect(await call(apiKey, "PUT", "/v1/webhooks", { url: receiver.url, legacy: false })).toEqual(
      failure(400, "legacy may only be true (a webhook signed with the API key of this request)"),
    );

    // legacy:true again re-binds the webhook to the key of that request (after a key rotation).
    const rotated = (await createApiKey(deps.db, merchantId, "rotated")).key;
    const rebound = await call(rotated, "PUT", "/v1/webhooks", { url: receiver.url, legacy: true });
    expect(rebound.status).toBe(200);
    expect(rebound.body.data.legacyApiKeyPrefix).toBe(rotated.slice(0, 12));
    // An update without `legacy` keeps the captured key.
    expect((await call(apiKey, "PUT", "/v1/webhooks", { url: receiver.url })).status).toBe(200);
    expect(await storedPlaintext(deps, "webhook_configs.legacy_api_key", merchantId)).toBe(rotated);
    const byRotated = await deliverOne(merchantId, receiver);
    expectSignedWith(byRotated, rotated);
    expect(byRotated.headers["webhook-signature"]).not.toBe(expectedStandardSignature(apiKey, byRotated));

    // Regenerating gives it a dedicated secret, which signs from then on.
    const up = await call(apiKey, "POST", "/v1/webhooks", { action: "regenerate-secret" });
    expect(up.status).toBe(200);
    expect(up.body.data.secret).toMatch(/^whsec_/);
    const after = await call(apiKey, "GET", "/v1/webhooks");
    expect(after.body.data).toMatchObject({ signing: "secret", legacyApiKeyPrefix: null });
    expectSignedWith(await deliverOne(merchantId, receiver), up.body.data.secret);
  });

  it("local mode (the test stack: WEBHOOK_ALLOW_PRIVATE outside production): http:// to this machine is saved and delivered", async () => {
    const received: { path: string; body: string; signature: string | undefined }[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ path: req.url ?? "", body, signature: req.headers["webhook-signature"] as string | undefined });
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const { apiKey, merchantId } = await newMerchant();
    const put = await call(apiKey, "PUT", "/v1/webhooks", { url, events: ["payment.completed"] });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    expect(put.body.data.url).toBe(url);
    // Plain http:// elsewhere is refused in local mode too.
    expect(await call(apiKey, "PUT", "/v1/webhooks", { url: "http://shop.example/hooks" })).toEqual(
      failure(400, "Webhook URL must use HTTPS (http:// is not accepted)"),
    );

    const e = await enqueuePayment(deps, merchantId);
    const dispatcher = createWebhookDispatcher({ log: () => {} });
    try {
      await dispatcher.run(deps);
    } finally {
      await dispatcher.close();
    }
    expect(received).toEqual([{ path: "/hooks", body: JSON.stringify(e.payload), signature: expect.stringMatching(/^v1,/) }]);
    const { rows } = await deps.db.pool.query(`SELECT status FROM webhook_deliveries WHERE payment_id = $1`, [e.paymentId]);
    expect(rows).toEqual([{ status: "success" }]);
  });

  it("refuses private targets in production mode (WEBHOOK_ALLOW_PRIVATE unset)", async () => {
    const prod = await createTestDeps({
      // The stack's bridge stand-in (BRIDGE_API_URL) needs, in production, the key that cancels unfilled orders.
      env: {
        WEBHOOK_ALLOW_PRIVATE: "false",
        NODE_ENV: "production",
        HASH_SECRET: "x".repeat(32),
        BRIDGE_AUTHORITY_PRIVATE_KEY: generatePrivateKey(),
      },
    });
    try {
      const m = await merchantWithKey(prod);
      const papp = createApp(prod);
      const put = async (url: string) => {
        const res = await papp.request("/api/v1/webhooks", {
          method: "PUT",
          headers: { "x-api-key": m.apiKey, "content-type": "application/json" },
          body: JSON.stringify({ url }),
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      for (const url of [
        "https://127.0.0.1:8443/hook",
        "https://localhost/hook",
        "https://10.0.0.8/hook",
        "https://[::1]/hook",
        "https://169.254.169.254/latest",
      ]) {
        expect(await put(url), url).toEqual(failure(400, "Webhook URL must not point to a loopback, private or reserved address"));
      }
      expect((await put("https://8.8.8.8/hook")).status).toBe(201);
      // Not local mode: http:// to this machine is refused, and the message says how to receive webhooks locally.
      for (const url of ["http://localhost:4242/hooks", "http://127.0.0.1:4242/hooks", "http://[::1]:4242/hooks"])
        expect(await put(url), url).toEqual(failure(400, HTTP_LOOPBACK_ERROR));
      expect(HTTP_LOOPBACK_ERROR).toContain("npm run cli -- listen");
    } finally {
      await prod.cleanup();
    }
  });
});
