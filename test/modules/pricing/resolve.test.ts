import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { priceOracleAbi } from "../../../abis/PriceOracle.js";
import { LOCAL_ROLES } from "../../../local/accounts.js";
import { LOCAL_PRICES } from "../../../local/deploy.js";
import { parsePrice18 } from "../../../core/money.js";
import {
  defaultOracleChain,
  normalizeOracleSymbol,
  OracleUnavailableError,
  readOraclePrice,
  lookupTokenPrice,
  parseCustomPriceUsd,
  PriceUnavailableError,
  resolveNativePriceUsd,
  resolveTokenPriceUsd,
} from "../../../modules/pricing/index.js";
import { chainHelpers } from "../../helpers/chain.js";
import { asDeployer } from "../../helpers/deployer-lock.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { startPriceIndexServer, type PriceIndexServer } from "../../helpers/price-index-server.js";

const CUSTOM = "0x2222222222222222222222222222222222222222";
const TINY = `TINY${Date.now().toString(36).toUpperCase()}`;

let px: PriceIndexServer;
let deps: TestDeps;
let deadRpc: TestDeps;
let noProvider: TestDeps;

beforeAll(async () => {
  px = await startPriceIndexServer();
  deps = await createTestDeps({ env: { PRICE_API_URL: px.url } });
  noProvider = await createTestDeps({ env: { PRICE_API_URL: "" } });
  deadRpc = await createTestDeps({
    env: { PRICE_API_URL: px.url, RPC_URL_137: "http://127.0.0.1:1", RPC_URL_777177: "http://127.0.0.1:1" },
  });
  // An 18-decimal price with every digit significant, set on the real oracle of chain 137 by its owner, the deployer:
  // under the lock every test file takes to send from that shared account (its nonce).
  const chain = deps.chains.find((c) => c.chainId === 137)!;
  const h = chainHelpers(chain);
  await asDeployer(deps.db, async () =>
    h.wait(
      await h
        .walletOf(LOCAL_ROLES.deployer)
        .writeContract({ address: chain.oracle!, abi: priceOracleAbi, functionName: "setPrice", args: [TINY, 12345678901234n] }),
    ),
  );
});
afterAll(async () => {
  await px?.close();
  await Promise.all([deps?.cleanup(), deadRpc?.cleanup(), noProvider?.cleanup()]);
});
beforeEach(() => px.reset());

// The resolver asks the oracle by the symbol its caller trusts (oracleSymbol): here, the token's own.
const custom = (symbol: string | null) => ({ address: CUSTOM, symbol, kind: "token" as const, oracleSymbol: symbol });

describe("resolveTokenPriceUsd (spec order)", () => {
  it("stablecoins are 1.00 without asking anyone", async () => {
    const usdt0 = deps.chains.find((c) => c.chainId === 137)!.tokens.find((t) => t.symbol === "USDT0")!;
    px.setToken(137, usdt0.address, { price: "0.998" });
    const p = await resolveTokenPriceUsd({ deps, chainId: 137, token: usdt0, customPriceUsd: "5" });
    expect(p).toEqual({ priceUsd: "1", priceUsd18: 10n ** 18n, source: "stablecoin" });
    expect(px.requests).toHaveLength(0);
  });

  it("(1) indexer: the provider's exact price", async () => {
    px.setToken(137, CUSTOM, { price: "0.000012345678901234" });
    const before = Date.now();
    const p = await resolveTokenPriceUsd({ deps, chainId: 137, token: custom("XRP") });
    expect(p).toEqual({ priceUsd: "0.000012345678901234", priceUsd18: 12345678901234n, source: "indexer", updatedAt: expect.any(Date) });
    // An index price is as old as its read.
    expect(p!.updatedAt!.getTime()).toBeGreaterThanOrEqual(before);
  });

  it("(1) beats (2) and customPriceUsd is ignored", async () => {
    px.setToken(137, CUSTOM, { price: "0.51" });
    const p = await resolveTokenPriceUsd({ deps, chainId: 137, token: custom("XRP"), customPriceUsd: "9.99" });
    expect(p).toMatchObject({ priceUsd: "0.51", source: "indexer" });
  });

  it("(2) trusted_oracle when the provider has no price (zero counts as none)", async () => {
    px.setToken(137, CUSTOM, { price: "0" });
    const p = await resolveTokenPriceUsd({ deps, chainId: 137, token: custom("xrp"), customPriceUsd: "9.99" });
    expect(p).toMatchObject({ priceUsd: LOCAL_PRICES.XRP, priceUsd18: parsePrice18(LOCAL_PRICES.XRP!), source: "trusted_oracle" });
    expect(p!.updatedAt).toBeInstanceOf(Date);
    expect(px.requests).toHaveLength(1);
  });

  it("(2) on a chain the provider does not cover (service chain): oracle, provider not asked", async () => {
    const p = await resolveTokenPriceUsd({ deps, chainId: 777177, token: custom("CPAY") });
    expect(p).toMatchObject({ priceUsd: "0.05", source: "trusted_oracle" });
    expect(px.requests).toHaveLength(0);
  });

  it("(2) exact 18-decimal oracle price round-trips", async () => {
    const p = await resolveTokenPriceUsd({ deps, chainId: 137, token: custom(TINY.toLowerCase()) });
    expect(p).toMatchObject({ priceUsd: "0.000012345678901234", priceUsd18: 12345678901234n, source: "trusted_oracle" });
  });

  it("registry oracleSymbol is used (USDT0 -> USDT) and USDT0 is normalized", async () => {
    expect(normalizeOracleSymbol(" usdt0 ")).toBe("USDT");
    const p = await resolveTokenPriceUsd({
      deps,
      chainId: 137,
      token: { address: CUSTOM, symbol: "WHATEVER", oracleSymbol: "MATIC", kind: "token" },
    });
    expect(p).toMatchObject({ priceUsd: "0.5", source: "trusted_oracle" });
  });

  it("(3) custom when no source has a price", async () => {
    const p = await resolveTokenPriceUsd({ deps, chainId: 137, token: custom("NOPRICE"), customPriceUsd: "0.000012345678901234" });
    expect(p).toEqual({ priceUsd: "0.000012345678901234", priceUsd18: 12345678901234n, source: "custom" });
    const q = await resolveTokenPriceUsd({ deps, chainId: 777177, token: custom(null), customPriceUsd: "2.50" });
    expect(q).toEqual({ priceUsd: "2.5", priceUsd18: 2_500_000_000_000_000_000n, source: "custom" });
  });

  it("none -> null (invalid custom prices count as absent)", async () => {
    expect(await resolveTokenPriceUsd({ deps, chainId: 137, token: custom("NOPRICE") })).toBeNull();
    for (const bad of ["0", "-1", "abc", "1e3", "0.0000000000000000001", ""]) {
      expect(parseCustomPriceUsd(bad)).toBeNull();
      expect(await resolveTokenPriceUsd({ deps, chainId: 137, token: custom("NOPRICE"), customPriceUsd: bad })).toBeNull();
    }
    expect(await lookupTokenPrice({ deps, chainId: 137, token: custom(null) })).toEqual({ status: "none" });
  });

  it("without PRICE_API_URL the oracle still answers", async () => {
    expect(await resolveTokenPriceUsd({ deps: noProvider, chainId: 137, token: custom("TRX") })).toMatchObject({
      priceUsd: "0.25",
      source: "trusted_oracle",
    });
  });
});

describe("unavailable sources", () => {
  it("provider down: falls back to the oracle", async () => {
    px.mode = "fail";
    const r = await lookupTokenPrice({ deps, chainId: 137, token: custom("XRP") });
    expect(r).toMatchObject({ status: "ok", price: { source: "trusted_oracle", priceUsd: "0.5" }, skipped: ["price index: HTTP 500"] });
  });

  it("provider down and no oracle price: unavailable, even with customPriceUsd", async () => {
    px.mode = "fail";
    const r = await lookupTokenPrice({ deps, chainId: 137, token: custom("NOPRICE"), customPriceUsd: "1.5" });
    expect(r).toEqual({ status: "unavailable", errors: ["price index: HTTP 500"] });
    await expect(resolveTokenPriceUsd({ deps, chainId: 137, token: custom("NOPRICE"), customPriceUsd: "1.5" })).rejects.toBeInstanceOf(
      PriceUnavailableError,
    );
  });

  it("oracle RPC down: unavailable", async () => {
    const r = await lookupTokenPrice({ deps: deadRpc, chainId: 777177, token: custom("CPAY"), customPriceUsd: "1" });
    expect(r.status).toBe("unavailable");
    await expect(readOraclePrice(deadRpc, "ETH")).rejects.toBeInstanceOf(OracleUnavailableError);
  });

  it("oracle RPC down but the provider has a price: indexer", async () => {
    px.setToken(137, CUSTOM, { price: "3" });
    expect(await resolveTokenPriceUsd({ deps: deadRpc, chainId: 137, token: custom("XRP") })).toMatchObject({
      source: "indexer",
      priceUsd: "3",
    });
  });

  it("stablecoins never need a source", async () => {
    expect(
      await resolveTokenPriceUsd({ deps: deadRpc, chainId: 137, token: { address: CUSTOM, symbol: "USDC", kind: "stablecoin" } }),
    ).toMatchObject({ source: "stablecoin" });
  });
});

describe("oracle and native helpers", () => {
  it("default oracle is the first active chain in registry order", () => {
    expect(defaultOracleChain(deps)?.chainId).toBe(137);
  });

  it("readOraclePrice: symbol lookups, 0 -> null", async () => {
    const eth = await readOraclePrice(deps, "eth");
    expect(eth).toMatchObject({ symbol: "ETH", priceRaw: 3000n * 10n ** 18n, chainId: 137 });
    expect(await readOraclePrice(deps, "usdt0")).toMatchObject({ symbol: "USDT", priceRaw: 10n ** 18n });
    expect(await readOraclePrice(deps, "NOPE")).toBeNull();
    expect(await readOraclePrice(deps, "X".repeat(100))).toBeNull();
    expect(await readOraclePrice(deps, "CPAY", { chainId: 777177 })).toMatchObject({ chainId: 777177, priceRaw: parsePrice18("0.05") });
    // a registry chain without its own oracle in this deployment uses the default one
    expect(await readOraclePrice(deps, "BNB", { chainId: 56 })).toMatchObject({ chainId: 137, priceRaw: 600n * 10n ** 18n });
  });

  it("resolveNativePriceUsd: provider, then the oracle by the native symbol", async () => {
    expect(await resolveNativePriceUsd(deps, 137)).toMatchObject({ source: "trusted_oracle", priceUsd: "0.5" });
    px.setNative(137, "0.2345");
    expect(await resolveNativePriceUsd(deps, 137)).toMatchObject({ source: "indexer", priceUsd: "0.2345" });
    expect(await resolveNativePriceUsd(deps, 777177)).toBeNull();
  });
});
