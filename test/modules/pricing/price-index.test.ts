import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { zeroAddress } from "viem";
import { PriceIndexClient, priceIndexFromConfig, priceIndexPlatform } from "../../../modules/pricing/index.js";
import { startPriceIndexServer, type PriceIndexServer } from "../../helpers/price-index-server.js";
import { startScriptedHttpServer, type ScriptedHttpServer } from "../../helpers/scripted-http-server.js";

const TOKEN = "0x1111111111111111111111111111111111111111";
const TOKEN_MIXED = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01";

let px: PriceIndexServer;
/** A provider answering as each test scripts it (broken bodies, no answer), for what the stand-in does not do. */
let scripted: ScriptedHttpServer;
let client: PriceIndexClient;
const logs: string[] = [];
const TOKEN_PATH = `/simple/token_price/polygon-pos?contract_addresses=${TOKEN}&vs_currencies=usd`;

beforeAll(async () => {
  px = await startPriceIndexServer();
  scripted = await startScriptedHttpServer();
  // A loaded test machine may take a while to answer: only the timeout test below uses a short timeout.
  client = new PriceIndexClient({ baseUrl: px.url, apiKey: "k-123", timeoutMs: 10_000, log: (m) => logs.push(m) });
});
afterAll(async () => {
  await px?.close();
  await scripted?.close();
});
beforeEach(() => {
  px.reset();
  scripted.requests.length = 0;
  scripted.setReply(() => ({ status: 200, body: "{}" }));
  logs.length = 0;
});

describe("price index adapter: token price", () => {
  it("reads the price literal exactly (no float)", async () => {
    px.setToken(137, TOKEN, { price: "0.000012345678901234" });
    const r = await client.tokenPrice(137, TOKEN);
    expect(r).toEqual({ status: "ok", value: { priceUsd: "0.000012345678901234", priceUsd18: 12345678901234n } });
    expect(px.requests[0]).toEqual({
      path: `/api/v3/simple/token_price/polygon-pos?contract_addresses=${TOKEN}&vs_currencies=usd`,
      apiKey: "k-123",
    });
  });

  it("handles exponent literals, long fractions and mixed-case addresses", async () => {
    px.setToken(137, TOKEN, { price: "1.2345e-7" });
    expect(await client.tokenPrice(137, TOKEN)).toMatchObject({ status: "ok", value: { priceUsd: "0.00000012345" } });
    px.setToken(137, TOKEN, { price: "0.12345678901234567891" });
    expect(await client.tokenPrice(137, TOKEN)).toMatchObject({
      status: "ok",
      value: { priceUsd: "0.123456789012345678", priceUsd18: 123456789012345678n },
    });
    px.setToken(1, TOKEN_MIXED, { price: "1.0001" });
    expect(await client.tokenPrice(1, TOKEN_MIXED)).toMatchObject({ status: "ok", value: { priceUsd: "1.0001" } });
    expect(px.requests.at(-1)!.path).toContain(`/simple/token_price/ethereum?contract_addresses=${TOKEN_MIXED.toLowerCase()}`);
  });

  it.each([
    ["zero", "0"],
    ["negative", "-1.5"],
    ["below 1e-18", "1e-19"],
    ["a non-numeric string", '"abc"'],
    ["null", "null"],
    ["an object", '{"x":1}'],
  ])("a %s price is no price", async (_what, literal) => {
    px.setToken(137, TOKEN, { price: literal });
    expect(await client.tokenPrice(137, TOKEN)).toMatchObject({ status: "none" });
  });

  it("a missing token is no price", async () => {
    expect(await client.tokenPrice(137, TOKEN)).toMatchObject({ status: "none" });
  });

  it("chains the provider does not cover are not asked", async () => {
    expect(await client.tokenPrice(777177, TOKEN)).toMatchObject({ status: "none" });
    expect(await client.tokenPrice(42161, TOKEN)).toMatchObject({ status: "none" });
    expect(await client.tokenPrice(999, TOKEN)).toMatchObject({ status: "none" });
    expect(px.requests).toHaveLength(0);
    expect([1, 137, 56, 8453].map(priceIndexPlatform)).toEqual(["ethereum", "polygon-pos", "binance-smart-chain", "base"]);
  });

  it("native coins use the coin id", async () => {
    px.setNative(137, "0.2345");
    px.setNative(56, "612.5");
    expect(await client.tokenPrice(137, zeroAddress)).toMatchObject({ status: "ok", value: { priceUsd: "0.2345" } });
    expect(px.requests[0]!.path).toBe("/api/v3/simple/price?ids=polygon-ecosystem-token&vs_currencies=usd");
    expect(await client.tokenPrice(56, zeroAddress)).toMatchObject({ status: "ok", value: { priceUsd: "612.5" } });
    expect(await client.tokenPrice(1, zeroAddress)).toMatchObject({ status: "none" });
  });

  it("provider errors are errors, not 'no price'", async () => {
    px.setToken(137, TOKEN, { price: "1" });
    px.mode = "fail";
    expect(await client.tokenPrice(137, TOKEN)).toEqual({ status: "error", error: "HTTP 500" });
    expect(logs).toEqual([`GET ${TOKEN_PATH} -> HTTP 500`]);
  });

  it("a provider that never answers: the adapter's timeout aborts the request and reports it", async () => {
    scripted.setReply(() => "hang");
    const quick = new PriceIndexClient({ baseUrl: `${scripted.origin}/api/v3`, apiKey: "k-123", timeoutMs: 300, log: (m) => logs.push(m) });
    expect(await quick.tokenPrice(137, TOKEN)).toEqual({ status: "error", error: "timeout after 300 ms" });
    // The request reached the provider, and the adapter gave up on it: the provider saw its connection closed.
    expect(scripted.requests.map((r) => r.path)).toEqual([`/api/v3${TOKEN_PATH}`]);
    await scripted.whenAbandoned(1);
    expect(logs).toEqual([`GET ${TOKEN_PATH} -> timeout after 300 ms`]);
  });

  it("a wrong base URL (404) and a dead port are errors", async () => {
    const wrong = new PriceIndexClient({ baseUrl: px.url.replace("/api/v3", "/nope"), log: () => {} });
    // the stand-in answers 404 for unknown paths
    expect(await wrong.tokenPrice(137, TOKEN)).toEqual({ status: "error", error: "HTTP 404" });
    const dead = new PriceIndexClient({ baseUrl: "http://127.0.0.1:1/api/v3", log: () => {} });
    expect(await dead.tokenPrice(137, TOKEN)).toEqual({ status: "error", error: "TypeError: fetch failed" });
  });

  it("a malformed body is an error", async () => {
    scripted.setReply(() => ({ status: 200, body: "{not json" }));
    const bad = new PriceIndexClient({ baseUrl: `${scripted.origin}/api/v3`, log: (m) => logs.push(m) });
    expect(await bad.tokenPrice(137, TOKEN)).toEqual({ status: "error", error: "malformed response" });
    expect(scripted.requests).toHaveLength(1);
    expect(logs).toEqual([expect.stringMatching(/^GET \/simple\/token_price\/polygon-pos\?\S+ -> malformed JSON \(.+\)$/)]);
  });

  it("config: no PRICE_API_URL means no provider; key header per host", async () => {
    expect(priceIndexFromConfig({ PRICE_API_URL: undefined, PRICE_API_KEY: "x" })).toBeNull();
    // Any other host: the pro header, on the wire.
    await priceIndexFromConfig({ PRICE_API_URL: `${scripted.origin}/api/v3`, PRICE_API_KEY: "own" })!.tokenPrice(1, TOKEN);
    // The header name depends on CoinGecko's own host names, which cannot be served here: the adapter's `fetch` option
    // only sends those requests to the local server instead (same path, same headers); its answer is the real one.
    const toLocal = ((url: string, init: RequestInit) =>
      fetch(url.replace(/^https:\/\/[^/]+/, scripted.origin), init)) as unknown as typeof fetch;
    await priceIndexFromConfig(
      { PRICE_API_URL: "https://api.coingecko.com/api/v3", PRICE_API_KEY: "demo" },
      { fetch: toLocal },
    )!.tokenPrice(1, TOKEN);
    await priceIndexFromConfig(
      { PRICE_API_URL: "https://pro-api.coingecko.com/api/v3/", PRICE_API_KEY: "pro" },
      { fetch: toLocal },
    )!.tokenPrice(1, TOKEN);
    await priceIndexFromConfig({ PRICE_API_URL: "https://pro-api.coingecko.com/api/v3" }, { fetch: toLocal })!.tokenPrice(1, TOKEN);
    const keyHeaders = scripted.requests.map((r) => [r.headers["x-cg-pro-api-key"], r.headers["x-cg-demo-api-key"]]);
    expect(keyHeaders).toEqual([
      ["own", undefined],
      [undefined, "demo"],
      ["pro", undefined],
      [undefined, undefined],
    ]);
    // The same request each time (a trailing slash of the base URL is dropped).
    expect(new Set(scripted.requests.map((r) => r.path))).toEqual(
      new Set([`/api/v3/simple/token_price/ethereum?contract_addresses=${TOKEN}&vs_currencies=usd`]),
    );
  });
});

describe("price index adapter: token metadata", () => {
  it("maps the coin-by-contract response", async () => {
    px.setToken(137, TOKEN, { price: "2.5", name: "Foo Token", symbol: "foo", decimals: 8, logo: "https://img.example/foo.png" });
    const r = await client.tokenMetadata(137, TOKEN);
    expect(r).toEqual({
      status: "ok",
      value: {
        name: "Foo Token",
        symbol: "FOO",
        decimals: 8,
        logo: "https://img.example/foo.png",
        price: { priceUsd: "2.5", priceUsd18: 2_500_000_000_000_000_000n },
      },
    });
    expect(px.requests[0]!.path).toBe(`/api/v3/coins/polygon-pos/contract/${TOKEN}`);
  });

  it("missing decimals, logo and price are null", async () => {
    px.setToken(137, TOKEN, { name: "Bar", symbol: "bar", decimals: null });
    expect(await client.tokenMetadata(137, TOKEN)).toEqual({
      status: "ok",
      value: { name: "Bar", symbol: "BAR", decimals: null, logo: null, price: null },
    });
  });

  it("unknown token (404) is none; failure is error; uncovered chain is none", async () => {
    expect(await client.tokenMetadata(137, TOKEN)).toMatchObject({ status: "none" });
    px.mode = "fail";
    expect(await client.tokenMetadata(137, TOKEN)).toMatchObject({ status: "error" });
    expect(await client.tokenMetadata(777177, TOKEN)).toMatchObject({ status: "none" });
  });

  it("native coin metadata", async () => {
    px.setNative(1, "3100.25", { name: "Ethereum", symbol: "eth", logo: "https://img.example/eth.png" });
    expect(await client.tokenMetadata(1, zeroAddress)).toEqual({
      status: "ok",
      value: {
        name: "Ethereum",
        symbol: "ETH",
        decimals: 18,
        logo: "https://img.example/eth.png",
        price: { priceUsd: "3100.25", priceUsd18: 3_100_250_000_000_000_000_000n },
      },
    });
  });
});
