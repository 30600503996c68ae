import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseUnits, zeroAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startApiServer } from "../../../api/server.js";
import { createApiKey, createMerchant } from "../../../modules/merchants/index.js";
import { createTerminal } from "../../../modules/terminals/index.js";
import { startDeadRpc } from "../../helpers/dead-rpc.js";
import { createTestDeps } from "../../helpers/deps.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// POST /payments through HTTP only (spec "POST /payments", "Payment record", "Errors", "Limits",
// "Rate limits"). The stored record is read back through GET /v1/payments. No chain processing.
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(() => svc?.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const DECIMAL = /^\d+(\.\d+)?$/;
const DAY_MS = 24 * 60 * 60 * 1000;

const tokenOf = (chainId: number, symbol: string) =>
  svc.deps.chains.find((c) => c.chainId === chainId)!.tokens.find((t) => t.symbol === symbol)!;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const USDT = () => tokenOf(777177, "USDT");
/** A valid body on the service chain (stablecoin, no gas fee): the cheapest valid creation. */
const body = (over: Record<string, unknown> = {}) => ({
  merchant: payout(),
  chainId: "777177",
  token: USDT().address,
  amount: "12.5",
  orderId: `order-${randomUUID()}`,
  ...over,
});

/** The limiter allows 100 requests/minute per key: error cases rotate over fresh merchants' keys. */
let errKey: { key: string; uses: number } | undefined;
async function rotatingKey() {
  if (!errKey || errKey.uses >= 90) errKey = { key: (await svc.newMerchant()).apiKey, uses: 0 };
  errKey.uses++;
  return errKey.key;
}

const post = (b: unknown, apiKey?: string) => svc.http("POST", "/payments", { body: b, apiKey });
async function create(apiKey: string, over: Record<string, unknown> = {}) {
  const b = body(over);
  const res = await post(b, apiKey);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: (res.body.url as string).split("/pay/")[1]!, body: b };
}
async function listed(apiKey: string, orderId: string) {
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(orderId)}`, { apiKey });
  expect(res.status).toBe(200);
  return res.body.data as any[];
}
async function one(apiKey: string, paymentId: string, orderId: string) {
  const rows = (await listed(apiKey, orderId)).filter((p) => p.paymentId === paymentId);
  expect(rows).toHaveLength(1);
  return rows[0];
}

describe("POST /payments: success", () => {
  it("answers 200 with {url} = {appUrl}/pay/<uuid> (then the extension fields), and the uuid is the new payment's id", async () => {
    const m = await svc.newMerchant();
    const b = body();
    const res = await post(b, m.apiKey);
    expect(res.status).toBe(200);
    // The spec's `url` first; `paymentId`, `expiresAt` and `amountDue` are extensions (test/api/routes/payment-by-id.test.ts).
    expect(Object.keys(res.body)).toEqual(["url", "paymentId", "expiresAt", "amountDue"]);
    const prefix = `${svc.deps.config.appUrl}/pay/`;
    expect(res.body.url.startsWith(prefix)).toBe(true);
    const id = res.body.url.slice(prefix.length);
    expect(id).toMatch(UUID);
    expect(res.body.paymentId).toBe(id);
    const rows = await listed(m.apiKey, b.orderId);
    expect(rows.map((p) => p.paymentId)).toEqual([id]);
  });

  it("stores the record of the spec: types, exact amount, default expiry (createdAt + 24 h), defaults", async () => {
    const m = await svc.newMerchant();
    const merchant = payout();
    const before = svc.clock.now();
    const { id, body: b } = await create(m.apiKey, { merchant: merchant.toLowerCase(), amount: "12.345678", description: "Two coffees" });
    const after = svc.clock.now();
    const p = await one(m.apiKey, id, b.orderId);
    for (const field of [
      "paymentId",
      "orderId",
      "description",
      "status",
      "createdAt",
      "completedAt",
      "expiresAt",
      "chainId",
      "token",
      "amount",
      "merchant",
      "recipientAddress",
      "transaction",
      "fees",
      "gasless",
      "payerCoversFee",
      "terminal",
      "priceSource",
    ])
      expect(p, field).toHaveProperty(field);
    expect(p).toMatchObject({
      paymentId: id,
      orderId: b.orderId,
      description: "Two coffees",
      status: "pending",
      completedAt: null,
      chainId: "777177",
      token: { address: USDT().address, symbol: "USDT", decimals: 6 },
      amount: "12.345678",
      transaction: null,
      gasless: false,
      payerCoversFee: false,
      blockConfirmations: 1,
      terminal: null,
      priceSource: "stablecoin",
    });
    expect(p.merchant.toLowerCase()).toBe(merchant.toLowerCase());
    expect(p.merchant).toMatch(ADDRESS);
    expect(p.recipientAddress).toMatch(ADDRESS);
    expect(p.recipientAddress.toLowerCase()).not.toBe(merchant.toLowerCase());
    expect(typeof p.createdAt).toBe("number");
    expect(p.createdAt).toBeGreaterThanOrEqual(before);
    expect(p.createdAt).toBeLessThanOrEqual(after);
    expect(p.expiresAt).toBe(p.createdAt + DAY_MS);
    // Stablecoin on the service chain: 1.00 USD, no native coin so no gas fee, 0.10 USD processing,
    // platform fee waived by the promotion (a new account).
    expect(p.fees).toEqual({ platformFee: "0", gasFee: "0", processingFee: "0.1", totalFee: "0.1", feePercentage: 0, agentFee: "0" });
  });

  it("keeps amounts exact to the token's last decimal (no float rounding)", async () => {
    const m = await svc.newMerchant();
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: "0.000001" }, "0.000001"],
      [{ amount: "123456789012.123456" }, "123456789012.123456"],
      [{ amount: "0.1" }, "0.1"],
      [{ amount: "100.000000" }, "100"],
      [{ chainId: "137", token: zeroAddress, amount: "0.123456789012345678" }, "0.123456789012345678"],
      [{ chainId: "137", token: zeroAddress, amount: "1234567.000000000000000001" }, "1234567.000000000000000001"],
    ];
    for (const [over, expected] of cases) {
      const { id, body: b } = await create(m.apiKey, over);
      const p = await one(m.apiKey, id, b.orderId);
      expect(p.amount, JSON.stringify(over)).toBe(expected);
      expect(typeof p.amount).toBe("string");
    }
  });

  it("gives every payment its own recipientAddress, even with the same body and orderId", async () => {
    const m = await svc.newMerchant();
    const same = body();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await create(m.apiKey, same)).id);
    expect(new Set(ids).size).toBe(4);
    const rows = await listed(m.apiKey, same.orderId);
    expect(rows.map((p) => p.paymentId).sort()).toEqual([...ids].sort());
    const recipients = rows.map((p) => p.recipientAddress.toLowerCase());
    expect(new Set(recipients).size).toBe(4);
    for (const r of recipients) expect(r).toMatch(ADDRESS);
  });

  it("native MATIC on 137: zero-address token object, price from the on-chain oracle (0.5 USD), fees converted to MATIC", async () => {
    const m = await svc.newMerchant();
    const { id, body: b } = await create(m.apiKey, { chainId: "137", token: zeroAddress, amount: "10" });
    const p = await one(m.apiKey, id, b.orderId);
    expect(p.chainId).toBe("137");
    expect(p.token).toEqual({ address: zeroAddress, symbol: "MATIC", decimals: 18 });
    expect(p.priceSource).toBe("trusted_oracle");
    // 0.10 USD / 0.5 USD per MATIC.
    expect(p.fees.processingFee).toBe("0.2");
    expect(p.fees.platformFee).toBe("0");
    expect(p.fees.gasFee).toMatch(DECIMAL);
    for (const k of ["platformFee", "gasFee", "processingFee", "totalFee"]) expect(typeof p.fees[k], k).toBe("string");
    const units = (s: string) => parseUnits(s, 18);
    expect(units(p.fees.totalFee)).toBe(units(p.fees.platformFee) + units(p.fees.gasFee) + units(p.fees.processingFee));
    expect(typeof p.fees.feePercentage).toBe("number");
  });

  it("USDT0 on 137 and USDC on 777177 are stablecoins (priceSource `stablecoin`)", async () => {
    const m = await svc.newMerchant();
    for (const [chainId, symbol] of [
      [137, "USDT0"],
      [777177, "USDC"],
    ] as const) {
      const t = tokenOf(chainId, symbol);
      const { id, body: b } = await create(m.apiKey, { chainId: String(chainId), token: t.address });
      const p = await one(m.apiKey, id, b.orderId);
      expect(p.priceSource).toBe("stablecoin");
      expect(p.token).toEqual({ address: t.address, symbol, decimals: 6 });
      expect(p.chainId).toBe(String(chainId));
      expect(p.fees.processingFee).toBe("0.1");
    }
  });

  it("token addresses are matched case-insensitively", async () => {
    const m = await svc.newMerchant();
    const { id, body: b } = await create(m.apiKey, { token: USDT().address.toLowerCase() });
    expect((await one(m.apiKey, id, b.orderId)).token).toEqual({ address: USDT().address, symbol: "USDT", decimals: 6 });
  });

  it("platform fee: Member plan 0%; a direct merchant pays 1% once its 30 free transactions are taken", async () => {
    const member = await svc.newMerchant({ type: "member" });
    const a = await create(member.apiKey, { amount: "12.345678" });
    const pm = await one(member.apiKey, a.id, a.body.orderId);
    expect(pm.fees).toEqual({ platformFee: "0", gasFee: "0", processingFee: "0.1", totalFee: "0.1", feePercentage: 0, agentFee: "0" });

    const direct = await svc.newMerchant({ type: "direct" });
    // 30 open promotion payments reserve all 30 free slots.
    for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: 10 }, () => create(direct.apiKey)));
    const d = await create(direct.apiKey, { amount: "12.345678" });
    const pd = await one(direct.apiKey, d.id, d.body.orderId);
    // 1% of 12.345678 = 0.12345678, rounded up to the token's 6 decimals.
    expect(pd.fees).toEqual({
      platformFee: "0.123457",
      gasFee: "0",
      processingFee: "0.1",
      totalFee: "0.223457",
      feePercentage: 1,
      agentFee: "0",
    });
  });

  it("expiresAt, blockConfirmations, gasless and payerCoversFee are stored as given", async () => {
    const m = await svc.newMerchant();
    const expiresAt = svc.clock.now() + 3_600_000;
    const a = await create(m.apiKey, { expiresAt, blockConfirmations: 100, gasless: true });
    const pa = await one(m.apiKey, a.id, a.body.orderId);
    expect(pa).toMatchObject({ expiresAt, blockConfirmations: 100, gasless: true, payerCoversFee: false });

    const b = await create(m.apiKey, { blockConfirmations: 1, payerCoversFee: true, gasless: false });
    expect(await one(m.apiKey, b.id, b.body.orderId)).toMatchObject({ blockConfirmations: 1, gasless: false, payerCoversFee: true });

    // Gasless works with a token whose price is known (native MATIC, oracle): it stays gasless.
    const c = await create(m.apiKey, { chainId: "137", token: zeroAddress, amount: "3", gasless: true });
    expect(await one(m.apiKey, c.id, c.body.orderId)).toMatchObject({ gasless: true, payerCoversFee: false });

    // Explicit nulls for optional fields are the defaults.
    const d = await create(m.apiKey, {
      description: null,
      redirectUrl: null,
      expiresAt: null,
      blockConfirmations: null,
      gasless: null,
      payerCoversFee: null,
    });
    const pd = await one(m.apiKey, d.id, d.body.orderId);
    expect(pd).toMatchObject({ description: null, blockConfirmations: 1, gasless: false, payerCoversFee: false });
    expect(pd.expiresAt).toBe(pd.createdAt + DAY_MS);
  });

  it("accepts the limits exactly: orderId 100, description 200, redirectUrl 2000, blockConfirmations 1 and 100", async () => {
    const m = await svc.newMerchant();
    const orderId = `L-${randomUUID()}-`.padEnd(100, "x");
    const description = "d".repeat(200);
    const prefix = "https://shop.example/return?ref=";
    const redirectUrl = prefix + "r".repeat(2000 - prefix.length);
    expect([orderId.length, description.length, redirectUrl.length]).toEqual([100, 200, 2000]);
    const { id } = await create(m.apiKey, { orderId, description, redirectUrl, blockConfirmations: 100 });
    const p = await one(m.apiKey, id, orderId);
    expect(p).toMatchObject({ orderId, description, blockConfirmations: 100 });
  });

  it("counts the limits in characters, not UTF-16 code units (100 emoji are a valid orderId)", async () => {
    const m = await svc.newMerchant();
    const orderId = "🧾".repeat(100);
    const description = "é".repeat(100) + "🍵".repeat(100);
    const { id } = await create(m.apiKey, { orderId, description });
    expect(await one(m.apiKey, id, orderId)).toMatchObject({ orderId, description });
    expect(await post(body({ orderId: "🧾".repeat(101) }), m.apiKey)).toMatchObject({ status: 400, body: { error: "Invalid form data" } });
    expect(await post(body({ description: "🍵".repeat(201) }), m.apiKey)).toMatchObject({
      status: 400,
      body: { error: "Invalid form data" },
    });
  });

  it("accepts redirectUrl with a query string and http(s) only", async () => {
    const m = await svc.newMerchant();
    for (const redirectUrl of ["https://shop.example/thanks?order=42&x=y#top", "http://localhost:8080/return"]) {
      expect((await post(body({ redirectUrl }), m.apiKey)).status, redirectUrl).toBe(200);
    }
  });
});

describe("POST /payments: terminal payments", () => {
  it("POS-{CODE}-{CASHIER}-{TS} links the merchant's terminal; unknown code, another merchant's terminal and plain orderIds give null", async () => {
    const m = await svc.newMerchant();
    const other = await svc.newMerchant();
    const t = await createTerminal(svc.deps.db, m.id, "SHOP1", "Front desk");
    await createTerminal(svc.deps.db, other.id, "OTHER9", "Not yours");

    const pos = await create(m.apiKey, { orderId: `POS-SHOP1-alice-${Date.now()}` });
    expect((await one(m.apiKey, pos.id, pos.body.orderId)).terminal).toEqual({ terminalId: t.id, code: "SHOP1", name: "Front desk" });

    for (const orderId of [`POS-NOPE-alice-${Date.now()}`, `POS-OTHER9-bob-${Date.now()}`, `order-${randomUUID()}`]) {
      const p = await create(m.apiKey, { orderId });
      expect((await one(m.apiKey, p.id, orderId)).terminal, orderId).toBeNull();
    }
  });

  it("a deleted terminal gives null, for old and new payments; a new terminal with the same code is a new terminalId", async () => {
    const m = await svc.newMerchant();
    const t = await createTerminal(svc.deps.db, m.id, "DESK2", "Desk two");
    const before = await create(m.apiKey, { orderId: `POS-DESK2-carol-${Date.now()}` });
    expect((await one(m.apiKey, before.id, before.body.orderId)).terminal).toEqual({ terminalId: t.id, code: "DESK2", name: "Desk two" });

    await svc.deps.db.pool.query(`UPDATE terminals SET deleted_at = now() WHERE id = $1`, [t.id]);
    expect((await one(m.apiKey, before.id, before.body.orderId)).terminal).toBeNull();
    const during = await create(m.apiKey, { orderId: `POS-DESK2-carol-${Date.now() + 1}` });
    expect((await one(m.apiKey, during.id, during.body.orderId)).terminal).toBeNull();

    const t2 = await createTerminal(svc.deps.db, m.id, "DESK2", "Desk two (new)");
    expect(t2.id).not.toBe(t.id);
    const after = await create(m.apiKey, { orderId: `POS-DESK2-dave-${Date.now() + 2}` });
    expect((await one(m.apiKey, after.id, after.body.orderId)).terminal).toEqual({
      terminalId: t2.id,
      code: "DESK2",
      name: "Desk two (new)",
    });
    // The old payment stays with the deleted terminal.
    expect((await one(m.apiKey, before.id, before.body.orderId)).terminal).toBeNull();
  });
});

describe("POST /payments: errors, in the spec's order of checks", () => {
  const FORM = "Invalid form data";
  const bad = (b: unknown, error: string) => ({ b, error });

  it.each([
    ["invalid JSON", "{not json", FORM],
    ["empty body", "", FORM],
    ["JSON null", "null", FORM],
    ["JSON array", "[]", FORM],
    ["JSON string", '"x"', FORM],
    ["a NUL escaped in a key", '{"order\\u0000Id": "x"}', FORM],
    ["JSON 40 levels deep", "[".repeat(40) + "]".repeat(40), FORM],
  ])("%s -> 400 %s", async (_n, raw, error) => {
    const res = await post(raw, await rotatingKey());
    expect(res).toMatchObject({ status: 400, body: { error } });
    expect(res.body).toEqual({ error });
  });

  const formCases: [string, () => unknown][] = [
    ["missing merchant", () => ({ ...body(), merchant: undefined })],
    ["missing chainId", () => ({ ...body(), chainId: undefined })],
    ["missing token", () => ({ ...body(), token: undefined })],
    ["missing amount", () => ({ ...body(), amount: undefined })],
    ["missing orderId", () => ({ ...body(), orderId: undefined })],
    ["merchant not a string", () => body({ merchant: 123 })],
    ["token null", () => body({ token: null })],
    ["chainId boolean", () => body({ chainId: true })],
    ["amount boolean", () => body({ amount: true })],
    ["amount object", () => body({ amount: { value: "1" } })],
    ["orderId number", () => body({ orderId: 5 })],
    ["orderId empty", () => body({ orderId: "" })],
    ["orderId 101 chars", () => body({ orderId: "o".repeat(101) })],
    ["description number", () => body({ description: 5 })],
    ["description 201 chars", () => body({ description: "d".repeat(201) })],
    ["redirectUrl number", () => body({ redirectUrl: 5 })],
    ["redirectUrl 2001 chars", () => body({ redirectUrl: "https://shop.example/?r=".padEnd(2001, "r") })],
    ["redirectUrl not a URL", () => body({ redirectUrl: "not a url" })],
    ["redirectUrl javascript:", () => body({ redirectUrl: "javascript:alert(1)" })],
    ["expiresAt string", () => body({ expiresAt: String(Date.now() + 60_000) })],
    ["expiresAt fractional", () => body({ expiresAt: Date.now() + 60_000.5 })],
    ["expiresAt in the past", () => body({ expiresAt: Date.now() - 60_000 })],
    ["blockConfirmations 0", () => body({ blockConfirmations: 0 })],
    ["blockConfirmations 101", () => body({ blockConfirmations: 101 })],
    ["blockConfirmations 1.5", () => body({ blockConfirmations: 1.5 })],
    ["blockConfirmations -1", () => body({ blockConfirmations: -1 })],
    ["blockConfirmations string", () => body({ blockConfirmations: "5" })],
    ["gasless string", () => body({ gasless: "true" })],
    ["payerCoversFee number", () => body({ payerCoversFee: 1 })],
    ["customPriceUsd not a decimal", () => body({ customPriceUsd: "abc" })],
    ["customPriceUsd zero", () => body({ customPriceUsd: "0" })],
    ["customPriceUsd negative", () => body({ customPriceUsd: "-1" })],
    ["customPriceUsd beyond 18 decimals", () => body({ customPriceUsd: "0.0000000000000000001" })],
    // Issue 10: money is a string, as the spec types it (a JSON number is a float).
    ["amount a JSON number", () => body({ amount: 5 })],
    ["amount zero as a number", () => body({ amount: 0 })],
    ["amount negative number", () => body({ amount: -1 })],
    ["customPriceUsd a JSON number", () => body({ customPriceUsd: 1.5 })],
    // Issue 10: NUL characters never reach Postgres (they were a 500).
    ["NUL in orderId", () => body({ orderId: `order-\u0000-${randomUUID()}` })],
    ["NUL in description", () => body({ description: "a\u0000b" })],
    ["NUL in redirectUrl", () => body({ redirectUrl: "https://shop.example/\u0000" })],
    // Issue 10: beyond the JavaScript date range (were a 500).
    ["expiresAt 8640000000000001", () => body({ expiresAt: 8640000000000001 })],
    ["expiresAt 2^53-1", () => body({ expiresAt: 9007199254740991 })],
  ];
  it.each(formCases)("%s -> 400 Invalid form data", async (_n, make) => {
    const res = await post(make(), await rotatingKey());
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: FORM });
  });

  it.each([
    ...[
      "0x123",
      "abc",
      "",
      "0x" + "g".repeat(40),
      "0x" + "a".repeat(41),
      "0x" + "a".repeat(39),
      "a".repeat(42),
      " 0x" + "a".repeat(40),
      zeroAddress,
    ].map((merchant) => bad({ merchant }, "Invalid Merchant address format")),
    ...["0x123", "USDT", "", "0x" + "z".repeat(40), "0x" + "a".repeat(41)].map((token) => bad({ token }, "Invalid Token address format")),
    ...["999", "0", "abc", "", "-137", "137.0", "1e3"].map((chainId) => bad({ chainId }, "Invalid network selected")),
    ...["0", "0.0", "000.000", "-1", "-0.5", "abc", "", " ", "1e3", "Infinity", "NaN", "1,5", "0x10", "1.2.3"].map((amount) =>
      bad({ amount }, "Amount must be a positive number"),
    ),
    bad({ amount: "1" + "0".repeat(80) }, "Amount must be a positive number"),
    // Issue 10: no trimming; the grammar is digits with an optional fraction.
    bad({ amount: "\t5\n" }, "Amount must be a positive number"),
    bad({ amount: " 5" }, "Amount must be a positive number"),
  ])("$b -> 400 $error", async ({ b, error }) => {
    const res = await post(body(b as Record<string, unknown>), await rotatingKey());
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error });
  });

  it("every RPC provider of the chain down: the gas fee cannot be quoted -> 503 Oracle price unavailable, Retry-After 5, nothing stored", async () => {
    const providers = [await startDeadRpc(), await startDeadRpc()];
    const deps = await createTestDeps({ env: { RPC_URL_137: providers.map((p) => p.url).join(",") } });
    const server = await startApiServer(deps, 0, "127.0.0.1");
    try {
      const m = await createMerchant(deps.db, { name: "No RPC" });
      const apiKey = (await createApiKey(deps.db, m.id)).key;
      // USDT0 is priced without the chain (a stablecoin): only the gas price needs a provider.
      const t = deps.chains.find((c) => c.chainId === 137)!.tokens.find((x) => x.symbol === "USDT0")!;
      const res = await fetch(`http://127.0.0.1:${server.port}/api/payments`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": apiKey },
        body: JSON.stringify(body({ chainId: "137", token: t.address })),
      });
      expect([res.status, await res.json(), res.headers.get("retry-after")]).toEqual([503, { error: "Oracle price unavailable" }, "5"]);
      for (const p of providers) expect(p.connections).toBeGreaterThan(0);
      expect((await deps.db.pool.query(`SELECT count(*)::int AS n FROM payments`)).rows[0].n).toBe(0);
    } finally {
      await server.close();
      await deps.cleanup();
      for (const p of providers) await p.close();
    }
  });

  it("a supported network that this service does not run (chain 1) -> 400 Invalid network selected", async () => {
    const res = await post(body({ chainId: "1", token: "0xdAC17F958D2ee523a2206206994597C13D831ec7" }), await rotatingKey());
    expect(res).toMatchObject({ status: 400, body: { error: "Invalid network selected" } });
  });

  it("more decimals than the token has -> 400 with its own message (the spec's list has none for it); nothing stored", async () => {
    const m = await svc.newMerchant();
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: "1.0000001" }, "Amount must have at most 6 decimal places"],
      [{ amount: "0.0000001" }, "Amount must have at most 6 decimal places"],
      // Trailing zeros count: the amount is never rounded or trimmed.
      [{ amount: "1.5000000" }, "Amount must have at most 6 decimal places"],
      [{ chainId: "137", token: zeroAddress, amount: "1.0000000000000000001" }, "Amount must have at most 18 decimal places"],
      // What is not a positive number keeps the spec's message, however many decimals it has.
      [{ amount: "0.0000000" }, "Amount must be a positive number"],
      [{ amount: "-1.0000001" }, "Amount must be a positive number"],
      [{ amount: "1.00000001e3" }, "Amount must be a positive number"],
      [{ amount: "1." + "1".repeat(80) }, "Amount must be a positive number"],
    ];
    for (const [over, error] of cases) {
      const orderId = `dec-${randomUUID()}`;
      expect(await post(body({ ...over, orderId }), m.apiKey), JSON.stringify(over)).toMatchObject({ status: 400, body: { error } });
      expect(await listed(m.apiKey, orderId)).toEqual([]);
    }
    // As many decimals as the token has is fine.
    expect((await post(body({ amount: "1.000001" }), m.apiKey)).status).toBe(200);
  });

  it("an amount above uint256 smallest units of the token -> 400 Amount must be a positive number (never a 500)", async () => {
    // 10^74 USDT = 10^80 units and 10^60.5 MATIC = 10^78.5 wei: no token balance holds that (uint256 < 1.2 * 10^77).
    for (const over of [{ amount: "1" + "0".repeat(74) }, { chainId: "137", token: zeroAddress, amount: "1" + "0".repeat(60) + ".5" }]) {
      const res = await post(body(over), await rotatingKey());
      expect(res.status, over.amount).toBe(400);
      expect(res.body).toEqual({ error: "Amount must be a positive number" });
    }
  });

  it("uint256-max units with payerCoversFee: the amount due (amount + fees) would exceed uint256 -> 400, nothing stored", async () => {
    const m = await svc.newMerchant();
    const max = ((1n << 256n) - 1n).toString();
    const amount = `${max.slice(0, -6)}.${max.slice(-6)}`; // USDT has 6 decimals
    const orderId = `max-${randomUUID()}`;
    const res = await post(body({ amount, payerCoversFee: true, orderId }), m.apiKey);
    expect(res).toMatchObject({ status: 400, body: { error: "Amount must be a positive number" } });
    expect(await listed(m.apiKey, orderId)).toEqual([]);
  });

  it("a body over 64 KiB -> 413 {error}, declared or streamed, nothing stored", async () => {
    const m = await svc.newMerchant();
    const orderId = `big-${randomUUID()}`;
    const big = JSON.stringify({ ...body({ orderId }), description: "d".repeat(70 * 1024) });
    const res = await post(big, m.apiKey);
    expect(res).toEqual(expect.objectContaining({ status: 413, body: { error: "Request body too large (limit 65536 bytes)" } }));
    // Without a Content-Length (chunked): the reader stops at the limit.
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 100; i++) c.enqueue(new TextEncoder().encode("x".repeat(1024)));
        c.close();
      },
    });
    const chunked = await fetch(`${svc.url}/payments`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": m.apiKey },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await listed(m.apiKey, orderId)).toEqual([]);
  });

  it("a well-formed address that is no token of the chain -> 400 Invalid Token address format", async () => {
    // 777177 has no native coin; a random address holds no ERC-20 contract.
    for (const token of [zeroAddress, payout()]) {
      expect(await post(body({ token }), await rotatingKey()), token).toMatchObject({
        status: 400,
        body: { error: "Invalid Token address format" },
      });
    }
  });

  it("the first failing check names the error: form, merchant, token, network, amount, then the key", async () => {
    const key = await rotatingKey();
    const allBad = { merchant: "nope", token: "nope", chainId: "999", amount: "-1" };
    expect((await post({ ...body(allBad), orderId: 7 }, key)).body).toEqual({ error: FORM });
    expect((await post(body(allBad), key)).body).toEqual({ error: "Invalid Merchant address format" });
    expect((await post(body({ ...allBad, merchant: payout() }), key)).body).toEqual({ error: "Invalid Token address format" });
    expect((await post(body({ chainId: "999", amount: "-1" }), key)).body).toEqual({ error: "Invalid network selected" });
    expect((await post(body({ amount: "-1" }), key)).body).toEqual({ error: "Amount must be a positive number" });
    // customPriceUsd is a form field: its error comes before the address checks.
    expect((await post(body({ merchant: "nope", customPriceUsd: "abc" }), key)).body).toEqual({ error: FORM });
  });

  it("valid body without a key, with an unknown key, or with a revoked key -> 401 {error: Unauthorized}", async () => {
    const m = await svc.newMerchant();
    for (const apiKey of [undefined, "not-a-key", `${m.apiKey}x`]) {
      const res = await post(body(), apiKey);
      expect(res.status, String(apiKey)).toBe(401);
      expect(res.body).toEqual({ error: "Unauthorized" });
    }
    const revoked = await createApiKey(svc.deps.db, m.id, "to revoke");
    expect((await post(body(), revoked.key)).status).toBe(200);
    await svc.deps.db.pool.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [revoked.id]);
    expect(await post(body(), revoked.key)).toMatchObject({ status: 401, body: { error: "Unauthorized" } });
    // Nothing was created by the refused requests.
    const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE merchant_id = $1`, [m.id]);
    expect(rows[0].n).toBe(1);
  });

  it("an invalid body wins over a missing key (the key is checked last)", async () => {
    const cases: [unknown, string][] = [
      ["{not json", FORM],
      [{ ...body(), orderId: "o".repeat(101) }, FORM],
      [body({ blockConfirmations: 0 }), FORM],
      [body({ merchant: "0x1" }), "Invalid Merchant address format"],
      [body({ token: "0x1" }), "Invalid Token address format"],
      [body({ chainId: "999" }), "Invalid network selected"],
      [body({ amount: "0" }), "Amount must be a positive number"],
    ];
    for (const [b, error] of cases) {
      for (const apiKey of [undefined, "not-a-key"]) {
        const res = await post(b, apiKey);
        expect(res.status, `${JSON.stringify(b)} ${apiKey}`).toBe(400);
        expect(res.body).toEqual({ error });
      }
    }
  });

  it("an invalid body wins over a missing key, also for checks that need the running chains and tokens", async () => {
    const cases: [unknown, string][] = [
      [body({ expiresAt: Date.now() - 60_000 }), FORM],
      [body({ chainId: "1", token: "0xdAC17F958D2ee523a2206206994597C13D831ec7" }), "Invalid network selected"],
      [body({ amount: "1.0000001" }), "Amount must have at most 6 decimal places"],
    ];
    for (const [b, error] of cases) {
      const res = await post(b);
      expect(res.status, JSON.stringify(b)).toBe(400);
      expect(res.body).toEqual({ error });
    }
  });
});

describe("POST /payments: rate limit 100/minute per merchant", () => {
  // Stopped time: the bucket refills one creation every 600 ms.
  beforeEach(() => svc.clock.freeze());
  afterEach(() => svc.clock.resume());

  it("the 101st request of a merchant in a minute is 429, whichever of its keys sends it; other merchants are unaffected", async () => {
    const m = await svc.newMerchant({ type: "member" });
    const first = await post(body(), m.apiKey);
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe("100;w=60");
    expect(first.headers.get("ratelimit")).toMatch(/^limit=100, remaining=99, reset=\d+$/);
    for (let i = 0; i < 9; i++) {
      const batch = await Promise.all(Array.from({ length: 11 }, () => post(body(), m.apiKey)));
      for (const r of batch) expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE merchant_id = $1`, [m.id]);
    expect(rows[0].n).toBe(100);

    const limited = await post(body(), m.apiKey);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: "Too many requests" });
    expect(limited.headers.get("ratelimit")).toMatch(/^limit=100, remaining=0, reset=\d+$/);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The limiter counts every request of the key, before the body is looked at.
    expect(await post("{not json", m.apiKey)).toMatchObject({ status: 429, body: { error: "Too many requests" } });
    const after = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE merchant_id = $1`, [m.id]);
    expect(after.rows[0].n).toBe(100);

    // Another key of the same merchant shares the budget; another merchant still creates.
    const second = await createApiKey(svc.deps.db, m.id, "second");
    expect(await post(body(), second.key)).toMatchObject({ status: 429, body: { error: "Too many requests" } });
    expect((await post(body(), (await svc.newMerchant()).apiKey)).status).toBe(200);
    // Reads are not limited by the creation limit.
    expect((await svc.http("GET", "/v1/payments?limit=1", { apiKey: m.apiKey })).status).toBe(200);
  });
});
