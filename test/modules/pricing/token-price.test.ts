import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { zeroAddress } from "viem";
import { startApiServer } from "../../../api/server.js";
import { LOCAL_PRICES } from "../../../local/deploy.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { startPriceIndexServer, type PriceIndexServer } from "../../helpers/price-index-server.js";

const NOW = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
const CUSTOM = "0x3333333333333333333333333333333333333333";
const CUSTOM_MIXED = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01";

type Api = { deps: TestDeps; base: string; close(): Promise<void> };
let px: PriceIndexServer;
let api: Api;
let deadRpc: Api;

async function start(env: Record<string, string>): Promise<Api> {
  const deps = await createTestDeps({ env, now: () => NOW });
  const srv = await startApiServer(deps, 0, "127.0.0.1");
  return {
    deps,
    base: `http://127.0.0.1:${srv.port}/api`,
    async close() {
      await srv.close();
      await deps.cleanup();
    },
  };
}

async function get(a: Api, path: string, query: Record<string, string> = {}) {
  const res = await fetch(`${a.base}${path}?${new URLSearchParams(query)}`);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown>, text };
}

beforeAll(async () => {
  px = await startPriceIndexServer();
  [api, deadRpc] = await Promise.all([
    start({ PRICE_API_URL: px.url }),
    start({ PRICE_API_URL: px.url, RPC_URL_137: "http://127.0.0.1:1", RPC_URL_777177: "http://127.0.0.1:1" }),
  ]);
});
afterAll(async () => {
  await Promise.all([api?.close(), deadRpc?.close()]);
  await px?.close();
});
beforeEach(() => px.reset());

/** Status and body of a GET (what the error assertions compare, both at once). */
async function answer(a: Api, path: string, query: Record<string, string> = {}) {
  const { status, body } = await get(a, path, query);
  return { status, body };
}
const badRequest = (error: string) => ({ status: 400, body: { error } });

const tokenOf = (chainId: number, symbol: string) =>
  api.deps.chains.find((c) => c.chainId === chainId)!.tokens.find((t) => t.symbol === symbol)!;

describe("GET /tokens/price", () => {
  it("indexer price: every field and type", async () => {
    px.setToken(137, CUSTOM_MIXED, { price: "0.000012345678901234" });
    const r = await get(api, "/tokens/price", { chainId: "137", address: CUSTOM_MIXED, symbol: "foo" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      chainId: 137,
      address: CUSTOM_MIXED.toLowerCase(),
      symbol: "FOO",
      priceUsd: "0.000012345678901234",
      source: "indexer",
      timestamp: "2025-01-02T03:04:05.678Z",
    });
  });

  it("symbol is null when omitted", async () => {
    px.setToken(137, CUSTOM, { price: "2" });
    const r = await get(api, "/tokens/price", { chainId: "137", address: CUSTOM });
    expect(r).toMatchObject({ status: 200, body: { symbol: null, priceUsd: "2", source: "indexer" } });
  });

  it("oracle fallback by symbol (USDT0 asks the oracle for USDT)", async () => {
    const usdt0 = tokenOf(137, "USDT0");
    const r = await get(api, "/tokens/price", { chainId: "137", address: usdt0.address, symbol: "usdt0" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      chainId: 137,
      address: usdt0.address.toLowerCase(),
      symbol: "USDT0",
      priceUsd: "1",
      source: "trusted_oracle",
      timestamp: "2025-01-02T03:04:05.678Z",
    });
    const s = await get(api, "/tokens/price", { chainId: "777177", address: CUSTOM, symbol: "cpay" });
    expect(s).toMatchObject({
      status: 200,
      body: { chainId: 777177, symbol: "CPAY", priceUsd: LOCAL_PRICES.CPAY, source: "trusted_oracle" },
    });
  });

  it("native coin: provider by coin id", async () => {
    px.setNative(137, "0.2345");
    const r = await get(api, "/tokens/price", { chainId: "137", address: zeroAddress });
    expect(r).toMatchObject({ status: 200, body: { chainId: 137, address: zeroAddress, priceUsd: "0.2345", source: "indexer" } });
  });

  it("404 without a symbol when the provider has no price; 404 when the oracle has none either", async () => {
    expect(await get(api, "/tokens/price", { chainId: "137", address: CUSTOM })).toMatchObject({
      status: 404,
      body: { error: "Price not available for this token" },
    });
    expect(await get(api, "/tokens/price", { chainId: "137", address: CUSTOM, symbol: "NOPE" })).toMatchObject({
      status: 404,
      body: { error: "Price not available for this token" },
    });
    expect(await get(api, "/tokens/price", { chainId: "999999", address: CUSTOM, symbol: "ETH" })).toMatchObject({
      status: 404,
      body: { error: "Price not available for this token" },
    });
  });

  it("provider down: oracle answers when it can, else 500", async () => {
    px.mode = "fail";
    expect(await get(api, "/tokens/price", { chainId: "137", address: CUSTOM, symbol: "ETH" })).toMatchObject({
      status: 200,
      body: { priceUsd: "3000", source: "trusted_oracle" },
    });
    expect(await get(api, "/tokens/price", { chainId: "137", address: CUSTOM })).toEqual({
      status: 500,
      body: { error: "Failed to fetch token price" },
      text: expect.any(String),
    });
    expect(await get(api, "/tokens/price", { chainId: "137", address: CUSTOM, symbol: "NOPE" })).toMatchObject({
      status: 500,
      body: { error: "Failed to fetch token price" },
    });
  });

  it("oracle RPC down: 500 unless the provider has a price", async () => {
    expect(await get(deadRpc, "/tokens/price", { chainId: "137", address: CUSTOM, symbol: "ETH" })).toMatchObject({
      status: 500,
      body: { error: "Failed to fetch token price" },
    });
    px.setToken(137, CUSTOM, { price: "7" });
    expect(await get(deadRpc, "/tokens/price", { chainId: "137", address: CUSTOM, symbol: "ETH" })).toMatchObject({
      status: 200,
      body: { priceUsd: "7", source: "indexer" },
    });
  });

  it("400s in the spec's order", async () => {
    const e = (q: Record<string, string>) => answer(api, "/tokens/price", q);
    expect(await e({})).toEqual(badRequest("chainId and address are required"));
    expect(await e({ chainId: "137" })).toEqual(badRequest("chainId and address are required"));
    expect(await e({ address: CUSTOM })).toEqual(badRequest("chainId and address are required"));
    expect(await e({ chainId: "", address: CUSTOM })).toEqual(badRequest("chainId and address are required"));
    expect(await e({ chainId: "abc", address: "nope" })).toEqual(badRequest("chainId must be a number"));
    expect(await e({ chainId: "1.5", address: CUSTOM })).toEqual(badRequest("chainId must be a number"));
    expect(await e({ chainId: "-1", address: CUSTOM })).toEqual(badRequest("chainId must be a number"));
    expect(await e({ chainId: "137", address: "nope" })).toEqual(badRequest("Invalid token address"));
    expect(await e({ chainId: "137", address: CUSTOM.slice(0, 41) })).toEqual(badRequest("Invalid token address"));
    expect(await e({ chainId: "137", address: CUSTOM + "0" })).toEqual(badRequest("Invalid token address"));
    expect(await e({ chainId: "137", address: "0x" + "g".repeat(40) })).toEqual(badRequest("Invalid token address"));
  });
});

describe("GET /tokens/metadata", () => {
  it("provider metadata: every field", async () => {
    px.setToken(137, CUSTOM_MIXED, { price: "1.0001", name: "Foo Token", symbol: "foo", decimals: 8, logo: "https://img.example/foo.png" });
    const r = await get(api, "/tokens/metadata", { chainId: "137", address: CUSTOM_MIXED });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      name: "Foo Token",
      symbol: "FOO",
      decimals: 8,
      logo: "https://img.example/foo.png",
      hasIndexerPrice: true,
      priceUsd: "1.0001",
      address: CUSTOM_MIXED.toLowerCase(),
      chainId: 137,
    });
  });

  it("provider knows the token but has no price: no priceUsd field", async () => {
    px.setToken(137, CUSTOM, { name: "Bar", symbol: "bar", decimals: 18 });
    const r = await get(api, "/tokens/metadata", { chainId: "137", address: CUSTOM });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ name: "Bar", symbol: "BAR", decimals: 18, logo: null, hasIndexerPrice: false, address: CUSTOM, chainId: 137 });
    expect("priceUsd" in r.body).toBe(false);
  });

  it("on-chain fallback when the provider does not know the token", async () => {
    const usdc = tokenOf(137, "USDC");
    const r = await get(api, "/tokens/metadata", { chainId: "137", address: usdc.address });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      name: "USDC (local 137)",
      symbol: "USDC",
      decimals: 6,
      logo: null,
      hasIndexerPrice: false,
      address: usdc.address.toLowerCase(),
      chainId: 137,
    });
    const usdt = tokenOf(777177, "USDT");
    const s = await get(api, "/tokens/metadata", { chainId: "777177", address: usdt.address });
    expect(s.status).toBe(200);
    expect(s.body).toEqual({
      name: "Tether USD (local 777177)",
      symbol: "USDT",
      decimals: 6,
      logo: null,
      hasIndexerPrice: false,
      address: usdt.address.toLowerCase(),
      chainId: 777177,
    });
  });

  it("provider without decimals on this chain: decimals from the contract, the rest from the provider", async () => {
    const usdt0 = tokenOf(137, "USDT0");
    px.setToken(137, usdt0.address, {
      price: "0.9995",
      name: "Tether USD0",
      symbol: "usdt0",
      decimals: null,
      logo: "https://img.example/usdt0.png",
    });
    const r = await get(api, "/tokens/metadata", { chainId: "137", address: usdt0.address });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      name: "Tether USD0",
      symbol: "USDT0",
      decimals: 6,
      logo: "https://img.example/usdt0.png",
      hasIndexerPrice: true,
      priceUsd: "0.9995",
      address: usdt0.address.toLowerCase(),
      chainId: 137,
    });
  });

  it("provider down: on-chain fallback", async () => {
    px.mode = "fail";
    const usdc = tokenOf(137, "USDC");
    const r = await get(api, "/tokens/metadata", { chainId: "137", address: usdc.address });
    expect(r).toMatchObject({ status: 200, body: { symbol: "USDC", decimals: 6, hasIndexerPrice: false, logo: null } });
  });

  it("native coin from the registry", async () => {
    const r = await get(api, "/tokens/metadata", { chainId: "137", address: zeroAddress });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      name: "MATIC",
      symbol: "MATIC",
      decimals: 18,
      logo: null,
      hasIndexerPrice: false,
      address: zeroAddress,
      chainId: 137,
    });
  });

  it("400 Cannot read token contract: no contract, not an ERC-20, unknown chain, chain without RPC", async () => {
    const oracle = api.deps.chains.find((c) => c.chainId === 137)!.oracle!;
    for (const q of [
      { chainId: "137", address: CUSTOM },
      { chainId: "137", address: oracle },
      { chainId: "999999", address: CUSTOM },
      { chainId: "1", address: CUSTOM },
      { chainId: "777177", address: zeroAddress },
    ]) {
      expect(await get(api, "/tokens/metadata", q)).toMatchObject({ status: 400, body: { error: "Cannot read token contract" } });
    }
  });

  it("500 Failed to fetch token metadata: RPC down, or provider down on a chain we cannot read", async () => {
    expect(await get(deadRpc, "/tokens/metadata", { chainId: "137", address: CUSTOM })).toMatchObject({
      status: 500,
      body: { error: "Failed to fetch token metadata" },
    });
    px.mode = "fail";
    expect(await get(api, "/tokens/metadata", { chainId: "1", address: CUSTOM })).toMatchObject({
      status: 500,
      body: { error: "Failed to fetch token metadata" },
    });
  });

  it("chain covered by the provider but not active here: provider answers", async () => {
    px.setToken(1, CUSTOM, { price: "3", name: "Main", symbol: "main", decimals: 18 });
    expect(await get(api, "/tokens/metadata", { chainId: "1", address: CUSTOM })).toMatchObject({
      status: 200,
      body: { name: "Main", decimals: 18, priceUsd: "3", chainId: 1 },
    });
  });

  it("400s in the spec's order", async () => {
    const e = (q: Record<string, string>) => answer(api, "/tokens/metadata", q);
    expect(await e({ chainId: "137" })).toEqual(badRequest("chainId and address are required"));
    expect(await e({ address: CUSTOM })).toEqual(badRequest("chainId and address are required"));
    expect(await e({ chainId: "x", address: "y" })).toEqual(badRequest("chainId must be a number"));
    expect(await e({ chainId: "137", address: "0x123" })).toEqual(badRequest("Invalid token address"));
  });
});

describe("GET /oracle/price", () => {
  it("every field and type", async () => {
    const r = await get(api, "/oracle/price", { symbol: "eth" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ symbol: "ETH", priceRaw: "3000000000000000000000", priceUsd: "3000", decimals: 18 });
    expect(r.text).toContain(`"priceRaw":"3000000000000000000000"`);
  });

  it("USDT0 is normalized to USDT; every local price matches", async () => {
    expect(await answer(api, "/oracle/price", { symbol: "Usdt0" })).toEqual({
      status: 200,
      body: { symbol: "USDT", priceRaw: "1000000000000000000", priceUsd: "1", decimals: 18 },
    });
    for (const [sym, price] of Object.entries(LOCAL_PRICES)) {
      expect(await answer(api, "/oracle/price", { symbol: sym })).toMatchObject({ status: 200, body: { symbol: sym, priceUsd: price } });
    }
  });

  it("400 / 404 / 500", async () => {
    expect(await get(api, "/oracle/price")).toMatchObject({ status: 400, body: { error: "Symbol parameter is required" } });
    expect(await get(api, "/oracle/price", { symbol: "  " })).toMatchObject({
      status: 400,
      body: { error: "Symbol parameter is required" },
    });
    expect(await get(api, "/oracle/price", { symbol: "nope" })).toMatchObject({
      status: 404,
      body: { error: "Price not available for NOPE" },
    });
    expect(await get(deadRpc, "/oracle/price", { symbol: "ETH" })).toMatchObject({ status: 500, body: { error: "Failed to fetch price" } });
  });
});
