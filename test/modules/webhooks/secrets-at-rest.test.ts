import { createHash, randomBytes, randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../../api/app.js";
import { createSecretBox, parseSecretKey } from "../../../core/secret-box.js";
import { withTransaction } from "../../../db/client.js";
import { vaultOfCaller, createVault } from "../../../modules/vault/index.js";
import {
  createWebhookDispatcher,
  UNREADABLE_KEY,
  enqueueVaultWebhook,
  resealWebhookSecrets,
  generateWebhookSecret,
} from "../../../modules/webhooks/index.js";
import { openField } from "../../../core/sealed-fields.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { enqueuePayment, manualClock, merchantWithKey, storedPlaintext } from "./helpers/fixtures.js";
import { startReceiver, type Receiver } from "./helpers/receiver.js";

// Issue 10, finding 4: webhook secrets and a legacy webhook's API key are stored sealed with SECRET_KEY
// (AES-256-GCM), never in plaintext; deliveries still sign with them; plaintext rows of older versions
// keep working and are re-sealed when the processors start.

const clock = manualClock();
let deps: TestDeps;
let app: ReturnType<typeof createApp>;
let receiver: Receiver;

beforeAll(async () => {
  deps = await createTestDeps({ now: clock.now });
  app = createApp(deps);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await deps?.cleanup();
});
beforeEach(() => {
  clock.set(Date.now());
  receiver.received.length = 0;
});

const call = async (apiKey: string, method: string, path: string, body?: unknown) => {
  const res = await app.request(`/api${path}`, {
    method,
    headers: { "x-api-key": apiKey, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

/** Every column of the merchant's (or vault's) webhook row, as Postgres holds it. */
const rowText = async (table: "webhook_configs" | "vault_webhook_configs", owner: { merchantId?: string; vaultId?: string }) => {
  const { rows } = await deps.db.pool.query(
    table === "webhook_configs"
      ? `SELECT row_to_json(c)::text AS t FROM webhook_configs c WHERE merchant_id = $1`
      : `SELECT row_to_json(c)::text AS t FROM vault_webhook_configs c WHERE vault_id = $1`,
    [owner.merchantId ?? owner.vaultId],
  );
  expect(rows).toHaveLength(1);
  return rows[0].t as string;
};

const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");

const vaultOf = async (apiKey: string) => {
  await createVault(deps, { apiKey }, { businessName: "Sealed Shop", walletAddress: `0x${randomBytes(20).toString("hex")}` });
  return vaultOfCaller(deps, { apiKey });
};

async function enqueueDeposit(merchantId: string, vaultId: string) {
  const depositId = randomUUID();
  await withTransaction(deps.db, (c) =>
    enqueueVaultWebhook(c, {
      merchantId,
      vaultId,
      depositId,
      event: "deposit.completed",
      data: { depositId, timestamp: clock.now() },
      dedupeKey: `deposit.completed:${depositId}`,
    }),
  );
}

/** One dispatcher pass (a fresh dispatcher: its first pass re-seals plaintext rows). */
async function dispatchOnce(log: string[] = [], with_: TestDeps = deps) {
  const d = createWebhookDispatcher({ tls: { ca: receiver.ca }, log: (m) => log.push(m) });
  try {
    return await d.run(with_);
  } finally {
    await d.close();
  }
}

describe("stored sealed, never in plaintext", () => {
  it("payment webhook secret: on create, update and regenerate", async () => {
    const m = await merchantWithKey(deps);
    const created = await call(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url });
    expect(created.status).toBe(201);
    const secret = created.body.data.secret as string;
    expect(await rowText("webhook_configs", { merchantId: m.merchant.id })).not.toContain(secret);
    expect(await storedPlaintext(deps, "webhook_configs.secret", m.merchant.id)).toBe(secret);

    await call(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url, events: ["payment.completed"] });
    expect(await rowText("webhook_configs", { merchantId: m.merchant.id })).not.toContain(secret);
    expect((await call(m.apiKey, "GET", "/v1/webhooks")).body.data.secret).toBe(`whsec_********${secret.slice(-4)}`);

    const fresh = (await call(m.apiKey, "POST", "/v1/webhooks", { action: "regenerate-secret" })).body.data.secret as string;
    expect(await rowText("webhook_configs", { merchantId: m.merchant.id })).not.toContain(fresh);
    expect(await storedPlaintext(deps, "webhook_configs.secret", m.merchant.id)).toBe(fresh);

    // ...and deliveries are signed with it.
    await enqueuePayment(deps, m.merchant.id);
    expect((await dispatchOnce()).succeeded).toBe(1);
    const r = receiver.received[0]!;
    expect(r.headers["x-signature"]).toBe(sha256hex(r.rawBody + fresh));
    expect(() => new Webhook(fresh).verify(r.rawBody, r.headers)).not.toThrow();
  });

  it("legacy webhook: the API key is stored sealed (api_keys keeps only its SHA-256), and signs", async () => {
    const m = await merchantWithKey(deps);
    const created = await call(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url, legacy: true });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ signing: "api-key", legacyApiKeyPrefix: m.apiKey.slice(0, 12) });
    await call(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url, legacy: true, events: ["payment.completed"] });
    expect(await rowText("webhook_configs", { merchantId: m.merchant.id })).not.toContain(m.apiKey);
    expect(await storedPlaintext(deps, "webhook_configs.legacy_api_key", m.merchant.id)).toBe(m.apiKey);
    const keys = await deps.db.pool.query(`SELECT row_to_json(k)::text AS t FROM api_keys k WHERE merchant_id = $1`, [m.merchant.id]);
    for (const k of keys.rows) expect(k.t).not.toContain(m.apiKey);
    expect((await call(m.apiKey, "GET", "/v1/webhooks")).body.data.legacyApiKeyPrefix).toBe(m.apiKey.slice(0, 12));

    await enqueuePayment(deps, m.merchant.id);
    expect((await dispatchOnce()).succeeded).toBe(1);
    const r = receiver.received[0]!;
    expect(r.headers["x-signature"]).toBe(sha256hex(r.rawBody + m.apiKey));
    expect(() => new Webhook(m.apiKey, { format: "raw" }).verify(r.rawBody, r.headers)).not.toThrow();
  });

  it("Vault webhook secret: on create, update and regenerate", async () => {
    const m = await merchantWithKey(deps);
    const vault = await vaultOf(m.apiKey);
    const put = await call(m.apiKey, "PUT", "/vault/v1/config/webhooks", { url: receiver.url, events: ["deposit.*"] });
    expect(put.status).toBe(201);
    const secret = put.body.data.secret as string;
    expect(await rowText("vault_webhook_configs", { vaultId: vault.id })).not.toContain(secret);
    await call(m.apiKey, "PUT", "/vault/v1/config/webhooks", { url: receiver.url, events: ["deposit.completed"] });
    expect(await storedPlaintext(deps, "vault_webhook_configs.secret", vault.id)).toBe(secret);
    expect((await call(m.apiKey, "GET", "/vault/v1/config/webhooks")).body.data.secret).toBe(`whsec_********${secret.slice(-4)}`);

    const fresh = (await call(m.apiKey, "POST", "/vault/v1/config/webhooks")).body.data.secret as string;
    expect(fresh).not.toBe(secret);
    expect(await rowText("vault_webhook_configs", { vaultId: vault.id })).not.toContain(fresh);
    expect(await storedPlaintext(deps, "vault_webhook_configs.secret", vault.id)).toBe(fresh);

    await enqueueDeposit(m.merchant.id, vault.id);
    expect((await dispatchOnce()).succeeded).toBe(1);
    const r = receiver.received[0]!;
    expect(r.headers["x-webhook-signature"]).toBe(sha256hex(r.rawBody + fresh));
    expect(() => new Webhook(fresh).verify(r.rawBody, r.headers)).not.toThrow();
  });

  it("a sealed key copied into another row does not open there: a failed attempt, nothing is sent", async () => {
    const a = await merchantWithKey(deps);
    await call(a.apiKey, "PUT", "/v1/webhooks", { url: receiver.url });
    const b = await merchantWithKey(deps);
    await call(b.apiKey, "PUT", "/v1/webhooks", { url: receiver.url });
    await deps.db.pool.query(
      `UPDATE webhook_configs SET secret = (SELECT secret FROM webhook_configs WHERE merchant_id = $1) WHERE merchant_id = $2`,
      [a.merchant.id, b.merchant.id],
    );
    const { paymentId } = await enqueuePayment(deps, b.merchant.id);
    await dispatchOnce();
    expect(receiver.received).toHaveLength(0);
    const { rows } = await deps.db.pool.query(`SELECT status, attempts, last_error FROM webhook_deliveries WHERE payment_id = $1`, [
      paymentId,
    ]);
    expect(rows).toEqual([
      { status: "pending", attempts: 1, last_error: expect.stringMatching(/^signing key unreadable: .*does not open/) },
    ]);
    await call(b.apiKey, "DELETE", "/v1/webhooks");
  });
});

describe("plaintext rows of older versions", () => {
  it("still sign, and are re-sealed by the dispatcher's first pass", async () => {
    const plain = await merchantWithKey(deps);
    const legacy = await merchantWithKey(deps);
    const owner = await merchantWithKey(deps);
    const vault = await vaultOf(owner.apiKey);
    const secret = generateWebhookSecret();
    const vaultSecret = generateWebhookSecret();
    await deps.db.pool.query(`INSERT INTO webhook_configs (merchant_id, url, events, secret) VALUES ($1, $2, $3, $4)`, [
      plain.merchant.id,
      receiver.url,
      ["payment.completed"],
      secret,
    ]);
    await deps.db.pool.query(`INSERT INTO webhook_configs (merchant_id, url, events, legacy_api_key) VALUES ($1, $2, $3, $4)`, [
      legacy.merchant.id,
      receiver.url,
      ["payment.completed"],
      legacy.apiKey,
    ]);
    await deps.db.pool.query(`INSERT INTO vault_webhook_configs (merchant_id, vault_id, url, events, secret) VALUES ($1, $2, $3, $4, $5)`, [
      owner.merchant.id,
      vault.id,
      receiver.url,
      ["deposit.*"],
      vaultSecret,
    ]);
    // Read before any re-seal: the masked views work on plaintext rows.
    expect((await call(plain.apiKey, "GET", "/v1/webhooks")).body.data.secret).toBe(`whsec_********${secret.slice(-4)}`);

    const p = await enqueuePayment(deps, plain.merchant.id);
    const l = await enqueuePayment(deps, legacy.merchant.id);
    await enqueueDeposit(owner.merchant.id, vault.id);
    const log: string[] = [];
    expect((await dispatchOnce(log)).succeeded).toBe(3);
    expect(log.join("\n")).toMatch(/sealed \d+ stored webhook signing key/);

    expect(await rowText("webhook_configs", { merchantId: plain.merchant.id })).not.toContain(secret);
    expect(await rowText("webhook_configs", { merchantId: legacy.merchant.id })).not.toContain(legacy.apiKey);
    expect(await rowText("vault_webhook_configs", { vaultId: vault.id })).not.toContain(vaultSecret);
    expect(await storedPlaintext(deps, "webhook_configs.secret", plain.merchant.id)).toBe(secret);
    expect(await storedPlaintext(deps, "webhook_configs.legacy_api_key", legacy.merchant.id)).toBe(legacy.apiKey);
    expect(await storedPlaintext(deps, "vault_webhook_configs.secret", vault.id)).toBe(vaultSecret);

    const byBody = (id: string) => receiver.received.find((r) => r.rawBody.includes(id))!;
    expect(byBody(p.paymentId).headers["x-signature"]).toBe(sha256hex(byBody(p.paymentId).rawBody + secret));
    expect(byBody(l.paymentId).headers["x-signature"]).toBe(sha256hex(byBody(l.paymentId).rawBody + legacy.apiKey));
    const v = receiver.received.find((r) => r.headers["x-webhook-signature"])!;
    expect(v.headers["x-webhook-signature"]).toBe(sha256hex(v.rawBody + vaultSecret));

    // Sealed rows are signed the same way after the re-seal.
    await enqueuePayment(deps, plain.merchant.id);
    receiver.received.length = 0;
    expect((await dispatchOnce()).succeeded).toBe(1);
    expect(receiver.received[0]!.headers["x-signature"]).toBe(sha256hex(receiver.received[0]!.rawBody + secret));
  });

  it("re-sealing is idempotent and safe from several processes at once", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const m = await merchantWithKey(deps);
      ids.push(m.merchant.id);
      await deps.db.pool.query(`INSERT INTO webhook_configs (merchant_id, url, events, secret) VALUES ($1, $2, $3, $4)`, [
        m.merchant.id,
        receiver.url,
        ["payment.completed"],
        generateWebhookSecret(),
      ]);
    }
    const before = await Promise.all(
      ids.map((id) => deps.db.pool.query(`SELECT secret FROM webhook_configs WHERE merchant_id = $1`, [id])),
    );
    const results = await Promise.all([1, 2, 3].map(() => resealWebhookSecrets(deps)));
    expect(results.reduce((n, r) => n + r.resealed, 0)).toBe(6);
    expect(await resealWebhookSecrets(deps)).toEqual({ resealed: 0, unreadable: 0 });
    for (const [i, id] of ids.entries()) expect(await storedPlaintext(deps, "webhook_configs.secret", id)).toBe(before[i]!.rows[0].secret);
  });

  it("a stored key no configured SECRET_KEY opens: a failed attempt, retried on schedule, never claimed for ever unrecorded", async () => {
    const m = await merchantWithKey(deps);
    expect((await call(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url })).status).toBe(201);
    const { paymentId } = await enqueuePayment(deps, m.merchant.id);
    const lostKey = { ...deps, config: { ...deps.config, SECRET_KEY: randomBytes(32).toString("hex"), SECRET_KEY_PREVIOUS: undefined } };
    const stats = await dispatchOnce([], lostKey);
    expect(stats.retrying).toBe(1);
    const { rows } = await deps.db.pool.query(`SELECT status, attempts, last_error FROM webhook_deliveries WHERE payment_id = $1`, [
      paymentId,
    ]);
    expect(rows).toEqual([{ status: "pending", attempts: 1, last_error: expect.stringContaining(UNREADABLE_KEY) }]);
  });

  it("key rotation: with the old key in SECRET_KEY_PREVIOUS, rows are read and re-sealed under the new key", async () => {
    const m = await merchantWithKey(deps);
    const secret = (await call(m.apiKey, "PUT", "/v1/webhooks", { url: receiver.url })).body.data.secret as string;
    const newKey = randomBytes(32).toString("hex");
    const rotated = { ...deps, config: { ...deps.config, SECRET_KEY: newKey, SECRET_KEY_PREVIOUS: deps.config.SECRET_KEY } };
    expect((await createApp(rotated).request("/api/v1/webhooks", { headers: { "x-api-key": m.apiKey } })).status).toBe(200);
    expect((await resealWebhookSecrets(rotated)).resealed).toBeGreaterThanOrEqual(1);
    const { rows } = await deps.db.pool.query(`SELECT secret FROM webhook_configs WHERE merchant_id = $1`, [m.merchant.id]);
    // The new key alone opens it: nothing stayed under the old one.
    const onlyNew = createSecretBox({ current: parseSecretKey(newKey) });
    expect(onlyNew.isCurrent(rows[0].secret)).toBe(true);
    expect(openField(onlyNew, "webhook_configs.secret", m.merchant.id, rows[0].secret)).toBe(secret);
    const onlyOld = createSecretBox({ current: parseSecretKey(deps.config.SECRET_KEY!) });
    expect(() => openField(onlyOld, "webhook_configs.secret", m.merchant.id, rows[0].secret)).toThrow(/neither SECRET_KEY/);
  });
});
