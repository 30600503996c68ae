import { getBase58Decoder } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { CHAINS } from "./registry.js";
import { isSolanaAddress, SOLANA, solanaToken, solanaWalletChain } from "./solana.js";

const base58 = (bytes: number[]) => getBase58Decoder().decode(new Uint8Array(bytes));

describe("SOLANA", () => {
  it("is DLN's chain 7565164 with SOL (9 decimals) and USDC at Circle's mint (6 decimals)", () => {
    expect(SOLANA.dlnChainId).toBe(7565164);
    expect(SOLANA.nativeSymbol).toBe("SOL");
    expect(SOLANA.decimals).toBe(9);
    expect(SOLANA.usdc).toEqual({ mint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", decimals: 6, symbol: "USDC" });
    expect(solanaToken("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")?.symbol).toBe("USDC");
    expect(solanaToken("So11111111111111111111111111111111111111112")).toBeUndefined();
  });

  it("is no EVM chain of the registry", () => {
    expect(CHAINS.some((c) => c.chainId === SOLANA.dlnChainId)).toBe(false);
  });

  it("names the Wallet Standard chains of mainnet and the local stack", () => {
    expect(solanaWalletChain()).toBe("solana:mainnet");
    expect(solanaWalletChain("mainnet")).toBe("solana:mainnet");
    expect(solanaWalletChain("localnet")).toBe("solana:localnet");
  });
});

describe("isSolanaAddress", () => {
  it("takes base58 of 32 bytes", () => {
    expect(isSolanaAddress("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")).toBe(true);
    expect(isSolanaAddress("11111111111111111111111111111111")).toBe(true);
    expect(isSolanaAddress(base58(Array.from({ length: 32 }, (_, i) => i + 1)))).toBe(true);
  });

  it("refuses 31- and 33-byte keys, hex, non-base58 characters and non-strings", () => {
    expect(isSolanaAddress(base58(Array.from({ length: 31 }, (_, i) => i + 1)))).toBe(false);
    expect(isSolanaAddress(base58(Array.from({ length: 33 }, (_, i) => i + 1)))).toBe(false);
    expect(isSolanaAddress("0x000000000000000000000000000000000000dEaD")).toBe(false);
    expect(isSolanaAddress("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt10")).toBe(false); // "0" is no base58 digit
    expect(isSolanaAddress("")).toBe(false);
    expect(isSolanaAddress(undefined)).toBe(false);
    expect(isSolanaAddress(42)).toBe(false);
  });
});
