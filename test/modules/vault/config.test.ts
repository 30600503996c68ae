import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { getAddress, zeroAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../../api/app.js";
import { withTransaction } from "../../../db/client.js";
import { createApiKey, createMerchant } from "../../../modules/merchants/index.js";
import { vaultOfCaller, rebindVault, setVaultFee } from "../../../modules/vault/index.js";
import { claimDueDeliveries, signingKeyOf, enqueueVaultWebhook } from "../../../modules/webhooks/index.js";
import { boxOf } from "../../../core/sealed-fields.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { manualClock, storedPlaintext } from "../webhooks/helpers/fixtures.js";

// The Vault's configuration side on the run's stack (chains 137 and 777177; 777177 is a vault chain, 137 is
// "coming soon", 11155111 is a vault chain this stack does not serve): /vault/v1/config, /config/tokens,
// /config/webhooks, the public token list, the GraphQL `vaultConfig` query and the operator's CLI.

const run = promisify(execFile);
const clock = manualClock();
let deps: TestDeps;
let app: ReturnType<typeof createApp>;
let USDT: string;
let USDC: string;
let FACTORY: string;

const WALLET = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const PUBLIC_ID = /^vlt_[A-Za-z0-9_-]{22}$/;

beforeAll(async () => {
  deps = await createTestDeps({ now: clock.now });
  app = createApp(deps);
  const chain = deps.chains.find((c) => c.chainId === 777177)!;
  USDT = chain.tokens.find((t) => t.symbol === "USDT")!.address;
  USDC = chain.tokens.find((t) => t.symbol === "USDC")!.address;
  FACTORY = chain.factory!;
});
afterAll(async () => {
  await deps?.cleanup();
});
// Rate limits count per minute of the (frozen) clock: each test starts in a fresh window.
beforeEach(() => clock.advance(61_000));

type Res = { status: number; body: any; headers: Headers };
async function call(method: string, path: string, opts: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers["x-api-key"] = opts.key;
  if (opts.body !== undefined) headers["content-type"] ??= "application/json";
  const res = await app.request(`/api${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers } as Res;
}

async function newMerchant(name = "Vault Co") {
  const merchant = await createMerchant(deps.db, { name });
  const key = await createApiKey(deps.db, merchant.id);
  return { id: merchant.id, key: key.key, keyId: key.id };
}

const fail = (status: number, error: string) => ({ status, body: { success: false, error } });
const pick = (r: Res) => ({ status: r.status, body: r.body });
/** A wallet of its own for each vault unless the test names one: a wallet is used by the vaults of one merchant only. */
const freshWallet = () => privateKeyToAccount(generatePrivateKey()).address;
const create = (key: string, body: Record<string, unknown> = {}) =>
  call("POST", "/vault/v1/config", { key, body: { businessName: "Acme Games", walletAddress: freshWallet(), ...body } });

describe("POST /vault/v1/config", () => {
  it("the spec's errors, in its order: 401, 400 businessName, 400 walletAddress, 400 Invalid EVM address, 409", async () => {
    const m = await newMerchant();
    // 401 comes before anything about the body.
    expect(pick(await call("POST", "/vault/v1/config", { body: {} }))).toEqual(fail(401, "Unauthorized"));
    expect(pick(await call("POST", "/vault/v1/config", { key: "cp_live_nope", body: { businessName: "x" } }))).toEqual(
      fail(401, "Unauthorized"),
    );
    // Whatever the body (wrong type, malformed, too large), a request without a valid key is 401 on every vault route.
    const badBodies = [
      { body: "{}", headers: { "content-type": "text/plain" } },
      { body: "{not json" },
      { body: "[1]" },
      { body: JSON.stringify({ businessName: "y".repeat(70_000) }) },
    ];
    const routes: [string, string][] = [
      ["POST", "/vault/v1/config"],
      ["PATCH", "/vault/v1/config"],
      ["POST", "/vault/v1/config/tokens"],
      ["DELETE", "/vault/v1/config/tokens"],
      ["PUT", "/vault/v1/config/webhooks"],
      ["POST", "/vault/v1/config/webhooks"],
      ["POST", "/vault/v1/users"],
      ["POST", `/vault/v1/deposits/${randomUUID()}/recover`],
    ];
    for (const [method, path] of routes)
      for (const key of [null, "cp_live_nope"])
        for (const b of badBodies) {
          // Unknown keys are limited per address (30 a minute, one more every 2 s: api/middleware/ip-limits.ts).
          clock.advance(2000);
          expect(pick(await call(method, path, { key, ...b })), `${method} ${path} ${b.body.slice(0, 20)}`).toEqual(
            fail(401, "Unauthorized"),
          );
        }
    for (const path of ["/vault/v1/users?externalUserId=a&chainId=9999999999999999", "/vault/v1/deposits?limit=abc"])
      expect(pick(await call("GET", path))).toEqual(fail(401, "Unauthorized"));
    expect(pick(await call("POST", "/vault/v1/config", { key: m.key, body: {} }))).toEqual(fail(400, "businessName is required"));
    expect(pick(await call("POST", "/vault/v1/config", { key: m.key }))).toEqual(fail(400, "businessName is required"));
    expect(pick(await call("POST", "/vault/v1/config", { key: m.key, body: { businessName: "   ", walletAddress: "0x1" } }))).toEqual(
      fail(400, "businessName is required"),
    );
    expect(pick(await call("POST", "/vault/v1/config", { key: m.key, body: { businessName: "Acme" } }))).toEqual(
      fail(400, "walletAddress is required"),
    );
    for (const walletAddress of [
      "0x123",
      "8ba1f109551bD432803012645Ac136ddd64DBA72",
      "0x8ba1f109551bD432803012645Ac136ddd64DBA7z",
      // Mixed case with a wrong EIP-55 checksum: a typo, not an address to pay.
      "0x8ba1f109551bD432803012645Ac136ddd64DBA73",
      "0x8Ba1f109551bD432803012645Ac136ddd64DBA72",
      42,
    ])
      expect(
        pick(await call("POST", "/vault/v1/config", { key: m.key, body: { businessName: "Acme", walletAddress } })),
        String(walletAddress),
      ).toEqual(fail(400, "Invalid EVM address"));
    expect(pick(await create(m.key, { walletAddress: zeroAddress }))).toEqual(fail(400, "walletAddress must not be the zero address"));
    expect(pick(await create(m.key, { feeBps: 10 }))).toEqual(
      fail(400, "feeBps can only be set by the operator for a registered business"),
    );
    expect(pick(await create(m.key, { color: "red" }))).toEqual(fail(400, "Unknown field: color"));
    expect(pick(await create(m.key, { businessName: "x".repeat(101) }))).toEqual(fail(400, "businessName must be at most 100 characters"));
    expect(pick(await call("POST", "/vault/v1/config", { key: m.key, body: "[1,2]" }))).toEqual(fail(400, "Body must be a JSON object"));
    expect(pick(await call("POST", "/vault/v1/config", { key: m.key, body: '"text"' }))).toEqual(fail(400, "Body must be a JSON object"));
    expect(pick(await call("POST", "/vault/v1/config", { key: m.key, body: "{not json" }))).toEqual(fail(400, "Invalid JSON body"));
    expect(pick(await call("POST", "/vault/v1/config", { key: m.key, body: "{}", headers: { "content-type": "text/plain" } }))).toEqual(
      fail(415, "Content-Type must be application/json"),
    );
    expect(pick(await create(m.key, { businessName: "y".repeat(70_000) }))).toEqual(
      fail(413, "Request body too large (limit 65536 bytes)"),
    );
    // Nothing was created by any of these.
    expect(pick(await call("GET", "/vault/v1/config", { key: m.key }))).toEqual(fail(404, "Vault not configured"));

    // Lowercase in, checksummed out; the default fee; 201.
    const created = await create(m.key, {
      businessName: "  Acme Games ",
      walletAddress: WALLET.toLowerCase(),
      enabledTokens: [{ chainId: 777177, token: USDT.toLowerCase(), tokenSymbol: "USDT" }],
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      success: true,
      data: {
        publicId: expect.stringMatching(PUBLIC_ID),
        businessName: "Acme Games",
        walletAddress: WALLET,
        feeBps: 25,
        isActive: true,
        enabledTokens: [{ chainId: 777177, tokenSymbol: "USDT", tokenAddress: getAddress(USDT) }],
      },
    });
    expect(Object.keys(created.body.data)).toEqual(["publicId", "businessName", "walletAddress", "feeBps", "isActive", "enabledTokens"]);
    // The public id is not the row id, and the decimals were recorded from the registry.
    const row = await deps.db.pool.query(`SELECT id, public_id, merchant_id, api_key_id FROM vault_configs`);
    const mine = row.rows.find((r) => r.public_id === created.body.data.publicId)!;
    expect(mine).toMatchObject({ merchant_id: m.id, api_key_id: m.keyId });
    expect(mine.id).not.toBe(mine.public_id);
    const tokens = await deps.db.pool.query(`SELECT token_address, decimals FROM vault_tokens WHERE vault_id = $1`, [mine.id]);
    expect(tokens.rows).toEqual([{ token_address: USDT.toLowerCase(), decimals: 6 }]);

    // One vault per API key: 409 once the body is valid (a bad body still answers its 400).
    expect(pick(await create(m.key))).toEqual(fail(409, "Vault already configured"));
    expect(pick(await create(m.key, { walletAddress: "0x1" }))).toEqual(fail(400, "Invalid EVM address"));
    expect((await call("GET", "/vault/v1/config", { key: m.key })).body.data).toEqual(created.body.data);
  });

  it("enabledTokens are checked item by item; nothing is created when one is refused", async () => {
    const m = await newMerchant();
    const cases: [unknown, string][] = [
      [{ chainId: 777177, token: USDT }, "enabledTokens[0]: tokenSymbol is required"],
      [[{ chainId: 137, token: USDT, tokenSymbol: "USDT" }], "enabledTokens[0]: Vault is coming soon on chain 137"],
      [
        [
          { chainId: 777177, token: USDT, tokenSymbol: "USDT" },
          { chainId: 8453, token: USDC, tokenSymbol: "USDC" },
        ],
        "enabledTokens[1]: Unsupported chain",
      ],
      [
        [
          { chainId: 777177, token: USDT, tokenSymbol: "USDT" },
          { chainId: 777177, token: USDT.toLowerCase(), tokenSymbol: "T" },
        ],
        "enabledTokens[1]: duplicate token",
      ],
      [[{ chainId: 11155111, token: USDT, tokenSymbol: "USDT" }], "enabledTokens[0]: Chain 11155111 is not served by this deployment"],
      [
        [{ chainId: 777177, token: FACTORY, tokenSymbol: "F" }],
        `enabledTokens[0]: Token ${getAddress(FACTORY)} is not an ERC-20 contract on chain 777177`,
      ],
      [[{ chainId: 777177, token: USDT, tokenSymbol: "USDT", extra: 1 }], "enabledTokens[0]: Unknown field: extra"],
      [["USDT"], "enabledTokens[0]: must be an object"],
    ];
    for (const [enabledTokens, error] of cases) {
      const body = Array.isArray(enabledTokens) ? { enabledTokens } : { enabledTokens: [enabledTokens] };
      expect(pick(await create(m.key, body)), error).toEqual(fail(400, error));
    }
    expect(pick(await create(m.key, { enabledTokens: "USDT" }))).toEqual(fail(400, "enabledTokens must be an array"));
    expect(pick(await call("GET", "/vault/v1/config", { key: m.key }))).toEqual(fail(404, "Vault not configured"));
  });

  it("concurrent creations with one key: exactly one 201, the others 409", async () => {
    const m = await newMerchant();
    const results = await Promise.all(Array.from({ length: 5 }, () => create(m.key)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const { rows } = await deps.db.pool.query(`SELECT count(*)::int AS n FROM vault_configs WHERE api_key_id = $1`, [m.keyId]);
    expect(rows[0].n).toBe(1);
  });

  it("one vault per key: another key of the same merchant has its own vault, or none", async () => {
    const m = await newMerchant();
    const a = await create(m.key, { businessName: "Shop A" });
    const second = await createApiKey(deps.db, m.id, "second");
    expect(pick(await call("GET", "/vault/v1/config", { key: second.key }))).toEqual(fail(404, "Vault not configured"));
    const b = await create(second.key, { businessName: "Shop B" });
    expect(b.status).toBe(201);
    expect(b.body.data.publicId).not.toBe(a.body.data.publicId);
    expect((await call("GET", "/vault/v1/config", { key: m.key })).body.data.businessName).toBe("Shop A");
    expect((await call("GET", "/vault/v1/config", { key: second.key })).body.data.businessName).toBe("Shop B");
  });
});

describe("GET and PATCH /vault/v1/config", () => {
  it("PATCH changes businessName, walletAddress and isActive only; strict body", async () => {
    const m = await newMerchant();
    const created = (await create(m.key)).body.data;
    expect(pick(await call("GET", "/vault/v1/config", { key: null }))).toEqual(fail(401, "Unauthorized"));
    expect(pick(await call("PATCH", "/vault/v1/config", { key: null, body: { isActive: false } }))).toEqual(fail(401, "Unauthorized"));

    const patch = (body: unknown) => call("PATCH", "/vault/v1/config", { key: m.key, body });
    expect(pick(await patch({}))).toEqual(fail(400, "Nothing to update: give businessName, walletAddress and/or isActive"));
    expect(pick(await patch({ feeBps: 0 }))).toEqual(fail(400, "feeBps can only be set by the operator for a registered business"));
    expect(pick(await patch({ feeRecipient: WALLET }))).toEqual(
      fail(400, "feeRecipient can only be set by the operator for a registered business"),
    );
    expect(pick(await patch({ publicId: "vlt_x", isActive: false }))).toEqual(fail(400, "Unknown field: publicId"));
    expect(pick(await patch({ isActive: "false" }))).toEqual(fail(400, "isActive must be a boolean"));
    expect(pick(await patch({ businessName: "" }))).toEqual(fail(400, "businessName is required"));
    expect(pick(await patch({ businessName: 7 }))).toEqual(fail(400, "businessName must be a string"));
    expect(pick(await patch({ walletAddress: "0xabc" }))).toEqual(fail(400, "Invalid EVM address"));
    expect(pick(await patch([]))).toEqual(fail(400, "Body must be a JSON object"));
    expect((await call("GET", "/vault/v1/config", { key: m.key })).body.data).toEqual(created);

    const NEW_WALLET = "0x00000000219ab540356cBB839Cbe05303d7705Fa";
    const r = await patch({ businessName: "Acme Two", walletAddress: NEW_WALLET.toLowerCase(), isActive: false });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { ...created, businessName: "Acme Two", walletAddress: NEW_WALLET, isActive: false } });
    const back = await patch({ isActive: true });
    expect(back.body.data).toEqual({ ...created, businessName: "Acme Two", walletAddress: NEW_WALLET, isActive: true });
    expect((await call("GET", "/vault/v1/config", { key: m.key })).body).toEqual(back.body);

    const other = await newMerchant();
    expect(pick(await call("PATCH", "/vault/v1/config", { key: other.key, body: { isActive: false } }))).toEqual(
      fail(404, "Vault not configured"),
    );
  });
});

describe("/vault/v1/config/tokens", () => {
  it("adds (201; 200 when already enabled, symbol relabelled) and removes tokens; coming-soon and unsupported chains", async () => {
    const m = await newMerchant();
    const add = (body: unknown) => call("POST", "/vault/v1/config/tokens", { key: m.key, body });
    const remove = (body: unknown) => call("DELETE", "/vault/v1/config/tokens", { key: m.key, body });
    expect(pick(await add({ chainId: 777177, token: USDT, tokenSymbol: "USDT" }))).toEqual(fail(404, "Vault not configured"));
    expect(pick(await call("POST", "/vault/v1/config/tokens", { key: null, body: {} }))).toEqual(fail(401, "Unauthorized"));
    const base = (await create(m.key, { enabledTokens: [{ chainId: 777177, token: USDT, tokenSymbol: "USDT" }] })).body.data;

    for (const chainId of [777178, 1, 137, 56])
      expect(pick(await add({ chainId, token: USDC, tokenSymbol: "USDC" }))).toEqual(fail(400, `Vault is coming soon on chain ${chainId}`));
    for (const chainId of [8453, 42161, 31337])
      expect(pick(await add({ chainId, token: USDC, tokenSymbol: "USDC" }))).toEqual(fail(400, "Unsupported chain"));
    const cases: [unknown, string][] = [
      [{ token: USDC, tokenSymbol: "USDC" }, "chainId is required"],
      [{ chainId: "777177", token: USDC, tokenSymbol: "USDC" }, "chainId must be a positive integer number"],
      [{ chainId: 777177.5, token: USDC, tokenSymbol: "USDC" }, "chainId must be a positive integer number"],
      [{ chainId: 777177, tokenSymbol: "USDC" }, "token is required"],
      [{ chainId: 777177, token: "0x1234", tokenSymbol: "USDC" }, "Invalid token address"],
      [{ chainId: 777177, token: zeroAddress, tokenSymbol: "ETH" }, "The native coin cannot be enabled in a vault; enable an ERC-20 token"],
      [{ chainId: 777177, token: USDC }, "tokenSymbol is required"],
      [{ chainId: 777177, token: USDC, tokenSymbol: "x".repeat(21) }, "tokenSymbol must be at most 20 characters"],
      [{ chainId: 777177, token: USDC, tokenSymbol: 5 }, "tokenSymbol must be a string"],
      [{ chainId: 777177, token: USDC, tokenSymbol: "US\nDC" }, "tokenSymbol must not contain control characters"],
      [{ chainId: 777177, token: USDC, tokenSymbol: "USDC", decimals: 6 }, "Unknown field: decimals"],
      [{ chainId: 11155111, token: USDC, tokenSymbol: "USDC" }, "Chain 11155111 is not served by this deployment"],
      [{ chainId: 777177, token: FACTORY, tokenSymbol: "F" }, `Token ${getAddress(FACTORY)} is not an ERC-20 contract on chain 777177`],
      [
        { chainId: 777177, token: "0x000000000000000000000000000000000000dEaD", tokenSymbol: "D" },
        "Token 0x000000000000000000000000000000000000dEaD is not an ERC-20 contract on chain 777177",
      ],
    ];
    for (const [body, error] of cases) expect(pick(await add(body)), error).toEqual(fail(400, error));
    expect(pick(await add("[]"))).toEqual(fail(400, "Body must be a JSON object"));
    expect((await call("GET", "/vault/v1/config", { key: m.key })).body.data).toEqual(base);

    // A symbol of exactly 20 characters is accepted; 201 with the updated configuration.
    const added = await add({ chainId: 777177, token: USDC.toLowerCase(), tokenSymbol: "U".repeat(20) });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      success: true,
      data: {
        ...base,
        enabledTokens: [
          { chainId: 777177, tokenSymbol: "USDT", tokenAddress: getAddress(USDT) },
          { chainId: 777177, tokenSymbol: "U".repeat(20), tokenAddress: getAddress(USDC) },
        ],
      },
    });
    // Adding it again is not an error: the symbol given replaces the old one (200).
    const again = await add({ chainId: 777177, token: USDC, tokenSymbol: "USDC" });
    expect(again.status).toBe(200);
    expect(again.body.data.enabledTokens).toEqual([
      { chainId: 777177, tokenSymbol: "USDC", tokenAddress: getAddress(USDC) },
      { chainId: 777177, tokenSymbol: "USDT", tokenAddress: getAddress(USDT) },
    ]);

    expect(pick(await remove({ chainId: 777177 }))).toEqual(fail(400, "token is required"));
    expect(pick(await remove({ chainId: 777177, token: USDC, tokenSymbol: "USDC" }))).toEqual(fail(400, "Unknown field: tokenSymbol"));
    const removed = await remove({ chainId: 777177, token: USDC.toLowerCase() });
    expect(pick(removed)).toEqual({ status: 200, body: { success: true, data: base } });
    expect(pick(await remove({ chainId: 777177, token: USDC }))).toEqual(fail(404, "Token not enabled"));
    expect(pick(await remove({ chainId: 137, token: USDT }))).toEqual(fail(404, "Token not enabled"));
    // Chain ids beyond what is stored are malformed, not a server error.
    for (const chainId of [9007199254740991, 2147483648]) {
      expect(pick(await remove({ chainId, token: USDT }))).toEqual(fail(400, "chainId must be a positive integer number"));
      expect(pick(await add({ chainId, token: USDT, tokenSymbol: "USDT" }))).toEqual(
        fail(400, "chainId must be a positive integer number"),
      );
    }
    for (const chainId of ["9999999999999999", "2147483648"])
      expect(pick(await call("GET", `/vault/v1/users?externalUserId=a&chainId=${chainId}`, { key: m.key }))).toEqual(
        fail(400, "chainId must be a positive integer number"),
      );
    expect((await call("GET", "/vault/v1/config", { key: m.key })).body.data).toEqual(base);
  });
});

describe("/vault/v1/config/webhooks", () => {
  it("HTTPS only; the secret whole on creation and regeneration, masked on every other read; DELETE", async () => {
    const m = await newMerchant();
    const hook = (method: string, body?: unknown) => call(method, "/vault/v1/config/webhooks", { key: m.key, body });
    for (const method of ["GET", "PUT", "POST", "DELETE"])
      expect(pick(await call(method, "/vault/v1/config/webhooks", { key: null }))).toEqual(fail(401, "Unauthorized"));
    expect(pick(await hook("PUT", { url: "https://example.com/hooks", events: ["deposit.*"] }))).toEqual(fail(404, "Vault not configured"));
    await create(m.key);
    expect(pick(await hook("GET"))).toEqual(fail(404, "Vault webhook not configured"));
    expect(pick(await hook("POST"))).toEqual(fail(404, "Vault webhook not configured"));
    expect(pick(await hook("DELETE"))).toEqual(fail(404, "Vault webhook not configured"));

    expect(pick(await hook("PUT", { url: "http://example.com/hooks", events: ["deposit.*"] }))).toEqual(
      fail(400, "Webhook URL must use HTTPS (http:// is not accepted)"),
    );
    expect(pick(await hook("PUT", { events: ["deposit.*"] }))).toEqual(fail(400, "url is required"));
    expect(pick(await hook("PUT", { url: "https://example.com/hooks", events: ["payment.completed"] }))).toEqual(
      fail(400, "Unknown event: payment.completed. Subscribable events: deposit.completed, deposit.failed, deposit.*"),
    );
    expect(pick(await hook("PUT", { url: "https://example.com/hooks", events: [] }))).toEqual(
      fail(400, "events must contain at least one event"),
    );
    expect(pick(await hook("PUT", { url: "https://example.com/hooks", secret: "whsec_mine" }))).toEqual(fail(400, "Unknown field: secret"));

    const created = await hook("PUT", { url: "https://example.com/hooks", events: ["deposit.completed"] });
    expect(created.status).toBe(201);
    const secret = created.body.data.secret as string;
    expect(secret).toMatch(SECRET);
    expect(created.body).toEqual({
      success: true,
      data: {
        id: expect.any(String),
        url: "https://example.com/hooks",
        events: ["deposit.completed"],
        isActive: true,
        secret,
        createdAt: clock.now(),
        updatedAt: clock.now(),
      },
    });
    const masked = `whsec_********${secret.slice(-4)}`;
    const got = await hook("GET");
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual({ ...created.body.data, secret: masked });

    // Update: url/events change, the secret stays and is masked.
    clock.advance(1000);
    const updated = await hook("PUT", { url: "https://example.com/v2", events: ["deposit.*"] });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toEqual({
      ...created.body.data,
      url: "https://example.com/v2",
      events: ["deposit.*"],
      secret: masked,
      updatedAt: clock.now(),
    });

    // POST regenerates: the new secret whole, once.
    expect(pick(await hook("POST", { action: "rotate" }))).toEqual(
      fail(400, 'Unknown action; expected no body or {"action": "regenerate-secret"}'),
    );
    const regenerated = await hook("POST");
    expect(regenerated.status).toBe(200);
    const fresh = regenerated.body.data.secret as string;
    expect(fresh).toMatch(SECRET);
    expect(fresh).not.toBe(secret);
    const again = await hook("POST", { action: "regenerate-secret" });
    expect(again.body.data.secret).toMatch(SECRET);
    expect(again.body.data.secret).not.toBe(fresh);
    // Stored sealed with SECRET_KEY (storedPlaintext refuses a plaintext row).
    const stored = await deps.db.pool.query(`SELECT vault_id FROM vault_webhook_configs WHERE merchant_id = $1`, [m.id]);
    expect(stored.rows).toHaveLength(1);
    expect(await storedPlaintext(deps, "vault_webhook_configs.secret", stored.rows[0].vault_id)).toBe(again.body.data.secret);
    expect((await hook("GET")).body.data.secret).toBe(`whsec_********${again.body.data.secret.slice(-4)}`);

    expect(pick(await hook("DELETE"))).toEqual({ status: 200, body: { success: true, data: { deleted: true } } });
    expect(pick(await hook("GET"))).toEqual(fail(404, "Vault webhook not configured"));
  });

  it("a merchant's vaults each have their webhook: deliveries are sent to their vault's URL, signed with its secret", async () => {
    const m = await newMerchant();
    const second = await createApiKey(deps.db, m.id, "second");
    const urls = ["https://a.example.com/hook", "https://b.example.com/hook"];
    const vaults: { vault: Awaited<ReturnType<typeof vaultOfCaller>>; secret: string }[] = [];
    for (const [i, key] of [m.key, second.key].entries()) {
      await create(key);
      const put = await call("PUT", "/vault/v1/config/webhooks", { key, body: { url: urls[i], events: ["deposit.*"] } });
      expect(put.status).toBe(201);
      vaults.push({ vault: await vaultOfCaller(deps, { apiKey: key }), secret: put.body.data.secret as string });
    }
    const depositIds: string[] = [];
    for (const { vault } of vaults) {
      const depositId = randomUUID();
      depositIds.push(depositId);
      const written = await withTransaction(deps.db, (c) =>
        enqueueVaultWebhook(c, {
          merchantId: m.id,
          vaultId: vault.id,
          depositId,
          event: "deposit.completed",
          data: { depositId, timestamp: clock.now() },
          dedupeKey: `deposit.completed:${depositId}`,
        }),
      );
      expect(written).toBe(true);
    }
    // A vault id of another merchant's vault never picks up this merchant's webhook.
    const stranger = await newMerchant();
    expect(
      await withTransaction(deps.db, (c) =>
        enqueueVaultWebhook(c, {
          merchantId: stranger.id,
          vaultId: vaults[0]!.vault.id,
          depositId: randomUUID(),
          event: "deposit.completed",
          data: {},
          dedupeKey: randomUUID(),
        }),
      ),
    ).toBe(false);

    const claimed = await claimDueDeliveries(deps.db, clock.now() + 1000, 10, 60_000);
    const byDeposit = new Map(
      (await deps.db.pool.query(`SELECT id, deposit_id FROM webhook_deliveries WHERE merchant_id = $1`, [m.id])).rows.map((r) => [
        r.id,
        r.deposit_id,
      ]),
    );
    const seen = claimed
      .filter((d) => byDeposit.has(d.id))
      .map((d) => ({ depositId: byDeposit.get(d.id), url: d.url, key: signingKeyOf(boxOf(deps.config), d) }));
    expect(seen.sort((a, b) => urls.indexOf(a.url!) - urls.indexOf(b.url!))).toEqual([
      { depositId: depositIds[0], url: urls[0], key: vaults[0]!.secret },
      { depositId: depositIds[1], url: urls[1], key: vaults[1]!.secret },
    ]);
  });
});

describe("GET /vault/v1/business/{publicId}/tokens", () => {
  it("public: the tokens of an active vault; 404 for unknown or inactive vaults", async () => {
    const m = await newMerchant();
    const publicId = (
      await create(m.key, {
        enabledTokens: [
          { chainId: 777177, token: USDT, tokenSymbol: "USDT" },
          { chainId: 777177, token: USDC, tokenSymbol: "USDC" },
        ],
      })
    ).body.data.publicId as string;
    const r = await call("GET", `/vault/v1/business/${publicId}/tokens`, { headers: { "x-forwarded-for": "198.51.100.1" } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      tokens: [
        { chainId: 777177, symbol: "USDC", address: getAddress(USDC) },
        { chainId: 777177, symbol: "USDT", address: getAddress(USDT) },
      ],
    });
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(pick(await call("GET", `/vault/v1/business/vlt_${"A".repeat(22)}/tokens`))).toEqual(fail(404, "Vault not found"));
    expect(pick(await call("GET", `/vault/v1/business/not-an-id/tokens`))).toEqual(fail(404, "Vault not found"));
    await call("PATCH", "/vault/v1/config", { key: m.key, body: { isActive: false } });
    expect(pick(await call("GET", `/vault/v1/business/${publicId}/tokens`))).toEqual(fail(404, "Vault not found"));
    await call("PATCH", "/vault/v1/config", { key: m.key, body: { isActive: true } });
    expect((await call("GET", `/vault/v1/business/${publicId}/tokens`)).status).toBe(200);
  });

  it("60 requests a minute per IP: the 61st is 429, another IP is unaffected", async () => {
    const m = await newMerchant();
    const publicId = (await create(m.key)).body.data.publicId as string;
    const get = (ip: string) => call("GET", `/vault/v1/business/${publicId}/tokens`, { headers: { "x-forwarded-for": ip } });
    for (let i = 0; i < 6; i++) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => get("203.0.113.7")));
      for (const res of batch) expect(res.status).toBe(200);
    }
    const limited = await get("203.0.113.7");
    expect(pick(limited)).toEqual(fail(429, "Too many requests"));
    expect(limited.headers.get("ratelimit")).toMatch(/^limit=60, remaining=0, reset=\d+$/);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await get("203.0.113.8")).status).toBe(200);
    // The next minute, the first IP is served again.
    clock.advance(60_000);
    expect((await get("203.0.113.7")).status).toBe(200);
  });

  it("config endpoints: 100 requests a minute per key, all of them together", async () => {
    const m = await newMerchant();
    await create(m.key);
    for (let i = 0; i < 9; i++) {
      const batch = await Promise.all(
        Array.from({ length: 11 }, (_, j) => call("GET", j % 2 ? "/vault/v1/config" : "/vault/v1/config/webhooks", { key: m.key })),
      );
      for (const res of batch) expect(res.status).not.toBe(429);
    }
    expect(pick(await call("POST", "/vault/v1/config/tokens", { key: m.key, body: {} }))).toEqual(fail(429, "Too many requests"));
    expect(pick(await call("GET", "/vault/v1/config", { key: m.key }))).toEqual(fail(429, "Too many requests"));
    expect((await call("GET", "/vault/v1/config", { key: (await newMerchant()).key })).status).toBe(404);
  });
});

describe("isolation between businesses", () => {
  it("another merchant's key neither reads nor changes the first one's configuration", async () => {
    const a = await newMerchant("Business A");
    const b = await newMerchant("Business B");
    const aConfig = (await create(a.key, { enabledTokens: [{ chainId: 777177, token: USDT, tokenSymbol: "USDT" }] })).body.data;
    await call("PUT", "/vault/v1/config/webhooks", { key: a.key, body: { url: "https://a.example.com/hook", events: ["deposit.*"] } });
    const aHook = (await call("GET", "/vault/v1/config/webhooks", { key: a.key })).body.data;

    const asB = (method: string, path: string, body?: unknown) => call(method, `/vault/v1${path}`, { key: b.key, body });
    const notConfigured = fail(404, "Vault not configured");
    expect(pick(await asB("GET", "/config"))).toEqual(notConfigured);
    expect(pick(await asB("PATCH", "/config", { isActive: false }))).toEqual(notConfigured);
    expect(pick(await asB("POST", "/config/tokens", { chainId: 777177, token: USDC, tokenSymbol: "USDC" }))).toEqual(notConfigured);
    expect(pick(await asB("DELETE", "/config/tokens", { chainId: 777177, token: USDT }))).toEqual(notConfigured);
    for (const method of ["GET", "POST", "DELETE"]) expect(pick(await asB(method, "/config/webhooks"))).toEqual(notConfigured);
    expect(pick(await asB("PUT", "/config/webhooks", { url: "https://b.example.com/hook", events: ["deposit.*"] }))).toEqual(notConfigured);

    // B's own vault: B's operations touch only it.
    const bConfig = (await create(b.key, { businessName: "B" })).body.data;
    expect(bConfig.publicId).not.toBe(aConfig.publicId);
    // A's wallet is A's: B cannot use it (it would hand out A's users' addresses), neither on creation nor by PATCH.
    expect(pick(await asB("PATCH", "/config", { walletAddress: aConfig.walletAddress.toLowerCase() }))).toEqual(
      fail(409, "walletAddress is used by another business"),
    );
    const other = await newMerchant("Business C");
    expect(pick(await create(other.key, { walletAddress: aConfig.walletAddress.toUpperCase().replace("0X", "0x") }))).toEqual(
      fail(409, "walletAddress is used by another business"),
    );
    expect(pick(await call("GET", "/vault/v1/config", { key: other.key }))).toEqual(notConfigured); // nothing was created
    // Another vault of A's merchant (another key) may use it.
    const aSecond = await createApiKey(deps.db, a.id, "second");
    expect((await create(aSecond.key, { walletAddress: aConfig.walletAddress })).status).toBe(201);
    const bWallet = freshWallet();
    await asB("PATCH", "/config", { isActive: false, walletAddress: bWallet });
    await asB("DELETE", "/config/tokens", { chainId: 777177, token: USDT });
    await asB("PUT", "/config/webhooks", { url: "https://b.example.com/hook", events: ["deposit.failed"] });
    await asB("POST", "/config/webhooks");
    await asB("DELETE", "/config/webhooks");
    expect((await asB("GET", "/config")).body.data).toEqual({
      ...bConfig,
      isActive: false,
      walletAddress: bWallet,
    });
    // B's old wallet stays B's (addresses made for it still pay it).
    expect(pick(await create(other.key, { walletAddress: bConfig.walletAddress }))).toEqual(
      fail(409, "walletAddress is used by another business"),
    );

    expect((await call("GET", "/vault/v1/config", { key: a.key })).body.data).toEqual(aConfig);
    expect((await call("GET", "/vault/v1/config/webhooks", { key: a.key })).body.data).toEqual(aHook);
  });

  it("GraphQL vaultConfig: the key's own vault, same scoping and messages as REST", async () => {
    const a = await newMerchant();
    const b = await newMerchant();
    const aConfig = (await create(a.key, { enabledTokens: [{ chainId: 777177, token: USDT, tokenSymbol: "USDT" }] })).body.data;
    const q = `{ vaultConfig { publicId businessName walletAddress feeBps isActive enabledTokens { chainId tokenSymbol tokenAddress } } }`;
    const gql = (key: string | null) => call("POST", "/graphql", { key, body: { query: q } });
    expect((await gql(a.key)).body).toEqual({ data: { vaultConfig: aConfig } });
    const none = (await gql(b.key)).body;
    expect(none.data).toEqual({ vaultConfig: null });
    expect(none.errors).toMatchObject([
      { message: "Vault not configured", path: ["vaultConfig"], extensions: { code: "NOT_FOUND", http: 404 } },
    ]);
    const anonymous = (await gql(null)).body;
    expect(anonymous.errors).toMatchObject([{ message: "Unauthorized", extensions: { code: "UNAUTHENTICATED", http: 401 } }]);
  });
});

describe("operator", () => {
  it("`vault fee` registers a business's fee (0-100 bps) and recipient; PATCH cannot", async () => {
    const m = await newMerchant();
    const { publicId } = (await create(m.key)).body.data;
    const cli = async (...args: string[]) => {
      const { stdout } = await run(process.execPath, ["--import", "tsx", "cli/index.ts", ...args], {
        env: { ...process.env, ...deps.env },
      });
      return JSON.parse(stdout);
    };
    const out = await cli("vault", "fee", "--public-id", publicId, "--fee-bps", "40", "--recipient", WALLET.toLowerCase());
    expect(out).toMatchObject({ publicId, feeBps: 40, feeRecipient: WALLET, isActive: true });
    expect((await call("GET", "/vault/v1/config", { key: m.key })).body.data.feeBps).toBe(40);
    const { rows } = await deps.db.pool.query(`SELECT fee_bps, fee_recipient, fee_registered_at FROM vault_configs WHERE public_id = $1`, [
      publicId,
    ]);
    expect(rows[0]).toMatchObject({ fee_bps: 40, fee_recipient: WALLET });
    expect(rows[0].fee_registered_at).toBeInstanceOf(Date);

    await expect(setVaultFee(deps, { publicId, feeBps: "101" })).rejects.toThrow("feeBps must be an integer from 0 to 100");
    await expect(setVaultFee(deps, { publicId, feeBps: "2.5" })).rejects.toThrow("feeBps must be an integer from 0 to 100");
    await expect(setVaultFee(deps, { publicId, feeBps: "10", recipient: "0x1" })).rejects.toThrow(
      "recipient must be an EVM address (not the zero address) or `default`",
    );
    await expect(setVaultFee(deps, { publicId: "vlt_missing", feeBps: "10" })).rejects.toThrow("Vault not found");
    const zero = await setVaultFee(deps, { publicId, feeBps: "0", recipient: "default" });
    expect(zero).toMatchObject({ feeBps: 0, feeRecipient: "default (FEE_RECIPIENT)" });
    expect((await call("GET", "/vault/v1/config", { key: m.key })).body.data.feeBps).toBe(0);
  });

  it("a revoked key loses access to its vault; the operator binds the vault to another key of the merchant", async () => {
    const m = await newMerchant();
    const config = (await create(m.key)).body.data;
    await deps.db.pool.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [m.keyId]);
    expect(pick(await call("GET", "/vault/v1/config", { key: m.key }))).toEqual(fail(401, "Unauthorized"));
    // The vault itself keeps working: its public token list still answers.
    expect((await call("GET", `/vault/v1/business/${config.publicId}/tokens`)).status).toBe(200);

    const next = await createApiKey(deps.db, m.id, "rolled");
    expect(pick(await call("GET", "/vault/v1/config", { key: next.key }))).toEqual(fail(404, "Vault not configured"));
    const stranger = await newMerchant();
    await expect(rebindVault(deps, { publicId: config.publicId, apiKeyId: stranger.keyId })).rejects.toThrow(
      "API key not found for this vault's merchant",
    );
    await expect(rebindVault(deps, { publicId: config.publicId, apiKeyId: m.keyId })).rejects.toThrow("That API key is revoked");
    const rebound = await rebindVault(deps, { publicId: config.publicId, apiKeyId: next.id });
    expect(rebound).toMatchObject({ publicId: config.publicId, apiKeyId: next.id });
    expect((await call("GET", "/vault/v1/config", { key: next.key })).body.data).toEqual(config);

    // A key that already has a vault cannot take another.
    const third = await createApiKey(deps.db, m.id, "third");
    const other = (await create(third.key)).body.data;
    await expect(rebindVault(deps, { publicId: other.publicId, apiKeyId: next.id })).rejects.toThrow("That API key already has a vault");
  });
});
