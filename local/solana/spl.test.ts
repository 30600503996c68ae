import { findAssociatedTokenPda, getMintDecoder, getTokenDecoder, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import type { Address } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { associatedTokenAddress, decodeMint, decodeTokenAccount, encodeMint, encodeTokenAccount, uiTokenAmount } from "./spl.js";
import { transactionErrorJson, transactionErrorText } from "./tx-error.js";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" as Address;
const OWNER = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM" as Address;

describe("SPL layouts", () => {
  it("writes a mint that @solana-program/token reads back", () => {
    const data = encodeMint({ mintAuthority: OWNER, supply: 123_456_789n, decimals: 6, isInitialized: true, freezeAuthority: null });
    expect(data.length).toBe(82);
    const m = getMintDecoder().decode(data);
    expect(m).toMatchObject({ supply: 123_456_789n, decimals: 6, isInitialized: true });
    expect(m.mintAuthority).toMatchObject({ __option: "Some", value: OWNER });
    expect(m.freezeAuthority).toMatchObject({ __option: "None" });
    expect(decodeMint(data)).toEqual({
      mintAuthority: OWNER,
      supply: 123_456_789n,
      decimals: 6,
      isInitialized: true,
      freezeAuthority: null,
    });
  });

  it("writes a token account that @solana-program/token reads back", () => {
    const t = {
      mint: USDC,
      owner: OWNER,
      amount: 2n ** 64n - 1n,
      delegate: null,
      state: 1,
      isNative: null,
      delegatedAmount: 0n,
      closeAuthority: null,
    };
    const data = encodeTokenAccount(t);
    expect(data.length).toBe(165);
    expect(getTokenDecoder().decode(data)).toMatchObject({ mint: USDC, owner: OWNER, amount: 2n ** 64n - 1n, state: 1 });
    expect(decodeTokenAccount(data)).toEqual(t);
    expect(decodeMint(data)).toBeUndefined();
    expect(
      decodeTokenAccount(encodeMint({ mintAuthority: null, supply: 0n, decimals: 6, isInitialized: true, freezeAuthority: null })),
    ).toBeUndefined();
  });

  it("derives the associated token account as @solana-program/token does", async () => {
    const [expected] = await findAssociatedTokenPda({ owner: OWNER, mint: USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    expect(await associatedTokenAddress(OWNER, USDC)).toBe(expected);
    expect(await associatedTokenAddress(USDC, OWNER)).not.toBe(expected);
  });

  it("shows amounts as Solana's RPC does", () => {
    expect(uiTokenAmount(1_500_000n, 6)).toEqual({ amount: "1500000", decimals: 6, uiAmount: 1.5, uiAmountString: "1.5" });
    expect(uiTokenAmount(0n, 6)).toEqual({ amount: "0", decimals: 6, uiAmount: 0, uiAmountString: "0" });
    expect(uiTokenAmount(7n, 6).uiAmountString).toBe("0.000007");
    expect(uiTokenAmount(42n, 0).uiAmountString).toBe("42");
  });
});

describe("transaction errors", () => {
  it("are Solana's JSON and Agave's texts", () => {
    expect(transactionErrorJson(7 as never)).toBe("BlockhashNotFound");
    expect(transactionErrorJson(6 as never)).toBe("AlreadyProcessed");
    expect(transactionErrorText("BlockhashNotFound")).toBe("Blockhash not found");
    expect(transactionErrorText({ InstructionError: [0, { Custom: 1 }] })).toBe(
      "Error processing Instruction 0: custom program error: 0x1",
    );
    expect(transactionErrorText({ InstructionError: [2, "InvalidAccountData"] })).toBe(
      "Error processing Instruction 2: invalid account data for instruction",
    );
  });
});
