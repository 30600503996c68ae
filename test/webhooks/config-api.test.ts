import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.js";
import { createTestDeps, type TestDeps } from "../helpers/deps.js";
import { merchantWithKey, storedPlaintext } from "./helpers/fixtures.js";

let deps: TestDeps;
let app: ReturnType<typeof createApp>;
let apiKey: string;
let merchantId: string;

beforeAll(async () => {
  deps = await createTestDeps();
  app = createApp(deps);
  const m = await merchantWithKey(deps);
  apiKey = m.apiKey;
  merchantId = m.merchant.id;
});
afterAll(async () => {
  await deps?.cleanup();
});

const call = async (method: string, path: string, body?: unknown, key: string | null = apiKey, headers: Record<string, string> = {}) => {
  const res = await app.request(`/api${path}`, {
    method,
    headers: { ...(key ? { "x-api-key": key } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

describe("/v1/webhooks", () => {
  it("401 with the envelope without a valid key", async () => {
    for (const method of ["GET", "PUT", "POST", "DELETE"]) {
      expect(await call(method, "/v1/webhooks", undefined, null)).toEqual({
        status: 401,
        body: { success: false, error: "Unauthorized", data: null },
      });
      expect((await call(method, "/v1/webhooks", undefined, "cp_live_wrong")).status).toBe(401);
    }
    expect((await call("GET", "/v1/webhooks/deliveries", undefined, null)).status).toBe(401);
  });

  it("GET before configuration: 404", async () => {
    expect(await call("GET", "/v1/webhooks")).toEqual({
      status: 404,
      body: { success: false, error: "Webhook not configured", data: null },
    });
    expect((await call("POST", "/v1/webhooks", { action: "regenerate-secret" })).status).toBe(404);
    expect((await call("DELETE", "/v1/webhooks")).status).toBe(404);
  });

  it("rejects HTTP, bad URLs, unknown events and bad fields", async () => {
    const http = await call("PUT", "/v1/webhooks", { url: "http://example.com/hook" });
    expect(http.status).toBe(400);
    expect(http.body).toEqual({ success: false, error: "Webhook URL must use HTTPS (http:// is not accepted)", data: null });
    expect((await call("PUT", "/v1/webhooks", { url: "nope" })).body.error).toBe("url is not a valid URL");
    expect((await call("PUT", "/v1/webhooks", {})).body.error).toBe("url is required");
    const unknown = await call("PUT", "/v1/webhooks", {
      url: "https://example.com/hook",
      events: ["payment.completed", "payment.refunded"],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(
      /^Unknown event: payment.refunded\. Subscribable events: payment.completed, payment.withdrawn, payment.awaiting_gas, payment.failed, payment.expired, payment.reorged$/,
    );
    expect((await call("PUT", "/v1/webhooks", { url: "https://example.com/hook", events: [] })).status).toBe(400);
    expect((await call("PUT", "/v1/webhooks", { url: "https://example.com/hook", isActive: "yes" })).body.error).toBe(
      "isActive must be a boolean",
    );
    expect((await call("PUT", "/v1/webhooks", { url: "https://example.com/hook", secret: "whsec_mine" })).body.error).toBe(
      "Unknown field: secret",
    );
    expect((await call("PUT", "/v1/webhooks", "{not json")).body.error).toBe("Invalid JSON body");
    expect((await call("GET", "/v1/webhooks")).status).toBe(404);
  });

  let created: any;
  it("PUT creates: 201, default events, whole secret once", async () => {
    const r = await call("PUT", "/v1/webhooks", { url: "https://example.com/hook" });
    expect(r.status).toBe(201);
    expect(r.body.success).toBe(true);
    expect(r.body.error).toBeNull();
    created = r.body.data;
    expect(created).toEqual({
      id: expect.any(String),
      url: "https://example.com/hook",
      events: ["payment.completed", "payment.withdrawn"],
      isActive: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      signing: "secret",
      legacyApiKeyPrefix: null,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
  });

  it("GET masks the secret", async () => {
    const r = await call("GET", "/v1/webhooks");
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ ...created, secret: `whsec_********${created.secret.slice(-4)}` });
    expect(JSON.stringify(r.body)).not.toContain(created.secret);
  });

  it("PUT updates only the given fields and keeps the secret (masked)", async () => {
    const r = await call("PUT", "/v1/webhooks", {
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
    const again = await call("PUT", "/v1/webhooks", { url: "https://example.org/new" });
    expect(again.body.data).toMatchObject({ events: ["payment.failed", "payment.expired"], isActive: false });
    expect(await storedPlaintext(deps, "webhook_configs.secret", merchantId)).toBe(created.secret);
  });

  it("POST regenerate-secret: new secret at once; other actions and content types refused", async () => {
    expect((await call("POST", "/v1/webhooks", { action: "rotate" })).status).toBe(400);
    expect(
      (await call("POST", "/v1/webhooks", JSON.stringify({ action: "regenerate-secret" }), apiKey, { "content-type": "text/plain" }))
        .status,
    ).toBe(415);
    const r = await call("POST", "/v1/webhooks", { action: "regenerate-secret" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, error: null, data: { secret: expect.stringMatching(/^whsec_/) } });
    expect(r.body.data.secret).not.toBe(created.secret);
    expect(await storedPlaintext(deps, "webhook_configs.secret", merchantId)).toBe(r.body.data.secret);
    expect((await call("GET", "/v1/webhooks")).body.data.secret).toBe(`whsec_********${r.body.data.secret.slice(-4)}`);
  });

  it("legacy:true is refused on a webhook with a secret", async () => {
    const r = await call("PUT", "/v1/webhooks", { url: "https://example.org/new", legacy: true });
    expect(r.status).toBe(409);
  });

  it("DELETE", async () => {
    expect(await call("DELETE", "/v1/webhooks")).toEqual({ status: 200, body: { success: true, error: null, data: { deleted: true } } });
    expect((await call("GET", "/v1/webhooks")).status).toBe(404);
  });

  it("legacy webhook: created with {legacy: true}, signs with the request's API key; regenerate upgrades it", async () => {
    const r = await call("PUT", "/v1/webhooks", { url: "https://example.com/legacy", legacy: true });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ secret: null, signing: "api-key", legacyApiKeyPrefix: apiKey.slice(0, 12) });
    expect(await storedPlaintext(deps, "webhook_configs.secret", merchantId)).toBeNull();
    expect(await storedPlaintext(deps, "webhook_configs.legacy_api_key", merchantId)).toBe(apiKey);
    expect(JSON.stringify((await call("GET", "/v1/webhooks")).body)).not.toContain(apiKey);
    expect((await call("PUT", "/v1/webhooks", { url: "https://example.com/legacy", legacy: false })).status).toBe(400);
    // legacy:true again re-binds the webhook to the key of that request (after a key rotation).
    const { createApiKey } = await import("../../modules/merchants/merchants.js");
    const rotated = (await createApiKey(deps.db, merchantId, "rotated")).key;
    const rebound = await call("PUT", "/v1/webhooks", { url: "https://example.com/legacy", legacy: true }, rotated);
    expect(rebound.status).toBe(200);
    expect(rebound.body.data.legacyApiKeyPrefix).toBe(rotated.slice(0, 12));
    // An update without `legacy` keeps the captured key.
    await call("PUT", "/v1/webhooks", { url: "https://example.com/legacy2" });
    expect(await storedPlaintext(deps, "webhook_configs.legacy_api_key", merchantId)).toBe(rotated);
    const up = await call("POST", "/v1/webhooks", { action: "regenerate-secret" });
    expect(up.body.data.secret).toMatch(/^whsec_/);
    const after = await call("GET", "/v1/webhooks");
    expect(after.body.data).toMatchObject({ signing: "secret", legacyApiKeyPrefix: null });
    await call("DELETE", "/v1/webhooks");
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
      for (const url of [
        "https://127.0.0.1:8443/hook",
        "https://localhost/hook",
        "https://10.0.0.8/hook",
        "https://[::1]/hook",
        "https://169.254.169.254/latest",
      ]) {
        const res = await papp.request("/api/v1/webhooks", {
          method: "PUT",
          headers: { "x-api-key": m.apiKey, "content-type": "application/json" },
          body: JSON.stringify({ url }),
        });
        expect(res.status, url).toBe(400);
        expect(((await res.json()) as any).error, url).toMatch(/loopback, private or reserved/);
      }
      const ok = await papp.request("/api/v1/webhooks", {
        method: "PUT",
        headers: { "x-api-key": m.apiKey, "content-type": "application/json" },
        body: JSON.stringify({ url: "https://8.8.8.8/hook" }),
      });
      expect(ok.status).toBe(201);
    } finally {
      await prod.cleanup();
    }
  });
});
