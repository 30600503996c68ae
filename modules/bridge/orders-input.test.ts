import { describe, expect, it } from "vitest";
import { readBridgeOrderBody, readBridgeQuoteQuery } from "./orders.js";

// The payer routes' input: EVM sources take 0x addresses and hashes, Solana (DLN's 7565164) base58 keys and signatures.

const USDC_SOL = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const PAYER_SOL = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const USDC_137 = "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359";
const message = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  return "accepted";
};

describe("readBridgeQuoteQuery", () => {
  it("a Solana source takes base58 token and payer; an EVM one 0x addresses; each refuses the other's", () => {
    expect(readBridgeQuoteQuery({ srcChainId: "7565164", srcToken: USDC_SOL, payer: PAYER_SOL })).toEqual({
      srcChainId: 7565164,
      srcToken: USDC_SOL,
      payer: PAYER_SOL,
    });
    expect(message(() => readBridgeQuoteQuery({ srcChainId: "7565164", srcToken: USDC_137 }))).toBe("Invalid source token address");
    expect(message(() => readBridgeQuoteQuery({ srcChainId: "7565164", srcToken: USDC_SOL, payer: USDC_137 }))).toBe(
      "Invalid payer address",
    );
    expect(message(() => readBridgeQuoteQuery({ srcChainId: "137", srcToken: USDC_SOL }))).toBe("Invalid source token address");
    expect(message(() => readBridgeQuoteQuery({ srcChainId: "137", srcToken: USDC_137, payer: PAYER_SOL }))).toBe("Invalid payer address");
    // 31 bytes of base58, and characters outside base58.
    expect(message(() => readBridgeQuoteQuery({ srcChainId: "7565164", srcToken: "1111111111111111111111111111111" }))).toBe(
      "Invalid source token address",
    );
    expect(message(() => readBridgeQuoteQuery({ srcChainId: "7565164", srcToken: USDC_SOL.replace("E", "0") }))).toBe(
      "Invalid source token address",
    );
  });

  it("txHash: an EVM hash (lowercased) or a Solana signature (kept as written)", () => {
    const sig = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";
    expect(readBridgeOrderBody({ txHash: sig })).toEqual({ txHash: sig });
    expect(readBridgeOrderBody({ txHash: `0x${"AB".repeat(32)}` })).toEqual({ txHash: `0x${"ab".repeat(32)}` });
    expect(message(() => readBridgeOrderBody({ txHash: PAYER_SOL }))).toBe("Invalid transaction hash");
    expect(message(() => readBridgeOrderBody({}))).toBe("txHash is required");
  });
});
