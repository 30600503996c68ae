import { describe, expect, it } from "vitest";
import { freshOrThrow, oracleMaxAgeS, OracleUnavailableError } from "./oracle.js";
import { needsPush, pushedSymbols } from "./pusher.js";

const rule = { deviationBps: 50, heartbeatS: 3600 };
const usd = (x: bigint) => x * 10n ** 18n;

describe("needsPush", () => {
  it("pushes a symbol the oracle lacks", () => {
    expect(needsPush(null, usd(3000n), Infinity, rule)).toBe(true);
    expect(needsPush(0n, usd(3000n), 0, rule)).toBe(true);
  });
  it("pushes past the deviation, either way, and not at or within it", () => {
    expect(needsPush(usd(3000n), usd(3015n), 10, rule)).toBe(false); // exactly 50 bps
    expect(needsPush(usd(3000n), usd(3015n) + 1n, 10, rule)).toBe(true);
    expect(needsPush(usd(3000n), usd(2985n), 10, rule)).toBe(false);
    expect(needsPush(usd(3000n), usd(2985n) - 1n, 10, rule)).toBe(true);
  });
  it("pushes an unmoved price once its heartbeat has passed", () => {
    expect(needsPush(usd(3000n), usd(3000n), 3599, rule)).toBe(false);
    expect(needsPush(usd(3000n), usd(3000n), 3600, rule)).toBe(true);
  });
});

describe("pushedSymbols", () => {
  it("keeps every registry symbol but the stablecoins by default", () => {
    const s = pushedSymbols({});
    expect(s).toEqual(expect.arrayContaining(["ETH", "MATIC", "BNB", "XRP", "TRX", "CPAY"]));
    expect(s).not.toContain("USDT");
    expect(s).not.toContain("USDC");
  });
  it("keeps PRICE_PUSHER_SYMBOLS, normalized", () => {
    expect(pushedSymbols({ PRICE_PUSHER_SYMBOLS: " eth, matic ,,ETH" })).toEqual(["ETH", "MATIC"]);
  });
});

describe("oracleMaxAgeS and freshOrThrow", () => {
  it("is ORACLE_MAX_AGE_S, else the pusher's heartbeat plus 10 minutes with a pusher, else off", () => {
    expect(oracleMaxAgeS({ ORACLE_MAX_AGE_S: 0, PRICE_PUSHER_PRIVATE_KEY: "0x1", PRICE_PUSHER_HEARTBEAT_S: 600 })).toBe(0);
    expect(oracleMaxAgeS({ PRICE_PUSHER_PRIVATE_KEY: "0x1", PRICE_PUSHER_HEARTBEAT_S: 600 })).toBe(1200);
    expect(oracleMaxAgeS({ PRICE_PUSHER_HEARTBEAT_S: 600 })).toBe(0);
  });
  it("counts age by the chain's clock", () => {
    const p = { symbol: "ETH", priceRaw: 1n, chainId: 1, updatedAt: new Date(1_000_000), readAt: new Date(1_000_000 + 1_200_000) };
    expect(freshOrThrow(p, 1200)).toBe(p);
    expect(freshOrThrow(p, 0)).toBe(p);
    expect(() => freshOrThrow({ ...p, readAt: new Date(1_000_000 + 1_201_000) }, 1200)).toThrow(OracleUnavailableError);
  });
});
