import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { lookupTokenPrice } from "../../../modules/pricing/index.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { startPriceIndexServer, type PriceIndexServer } from "../../helpers/price-index-server.js";

// Payment quotes read market prices through a per-process cache (PRICE_CACHE_TTL_MS): one lookup for concurrent
// quotes, never an answer older than the TTL, failures and custom prices never cached.
const TOKEN = "0x3333333333333333333333333333333333333333";
const token = { address: TOKEN, symbol: "CACHED", kind: "token" as const, oracleSymbol: null };
const TTL_MS = 300;

let px: PriceIndexServer;
let deps: TestDeps;

beforeAll(async () => {
  px = await startPriceIndexServer();
  deps = await createTestDeps({ env: { PRICE_API_URL: px.url, PRICE_CACHE_TTL_MS: String(TTL_MS) } });
});
afterAll(async () => {
  await px?.close();
  await deps?.cleanup();
});
beforeEach(() => px.reset());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quote = (t = token, customPriceUsd?: string) => lookupTokenPrice({ deps, chainId: 137, token: t, customPriceUsd, cached: true });

it("concurrent quotes share one provider request; a price is reused within the TTL only", async () => {
  px.setToken(137, TOKEN, { price: "2.5" });
  const answers = await Promise.all(Array.from({ length: 20 }, () => quote()));
  expect(px.requests).toHaveLength(1);
  expect(answers.every((a) => a.status === "ok" && a.price.priceUsd === "2.5")).toBe(true);

  px.setToken(137, TOKEN, { price: "3" });
  const t0 = performance.now();
  const again = await quote();
  if (performance.now() - t0 < TTL_MS) expect(again).toMatchObject({ status: "ok", price: { priceUsd: "2.5" } });
  await sleep(TTL_MS + 50);
  expect(await quote()).toMatchObject({ status: "ok", price: { priceUsd: "3", source: "indexer" } });
  expect(px.requests).toHaveLength(2);
});

it("an unavailable provider is not cached: the next quote asks again and gets the price", async () => {
  const other = { ...token, address: "0x4444444444444444444444444444444444444444" };
  px.mode = "fail";
  expect(await quote(other)).toMatchObject({ status: "unavailable" });
  px.mode = "ok";
  px.setToken(137, other.address, { price: "7" });
  expect(await quote(other)).toMatchObject({ status: "ok", price: { priceUsd: "7" } });
});

it("the merchant's custom price is applied per quote, not cached with the market answer", async () => {
  const unpriced = { ...token, address: "0x5555555555555555555555555555555555555555" };
  expect(await quote(unpriced, "1.25")).toMatchObject({ status: "ok", price: { priceUsd: "1.25", source: "custom" } });
  expect(await quote(unpriced, "9")).toMatchObject({ status: "ok", price: { priceUsd: "9", source: "custom" } });
  expect(await quote(unpriced)).toEqual({ status: "none" });
  expect(px.requests).toHaveLength(1);
});
