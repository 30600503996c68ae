import {
  address,
  appendTransactionMessageInstruction,
  compileTransaction,
  createTransactionMessage,
  getBase58Decoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Blockhash,
} from "@solana/kit";
import { bytesToHex, hexToBytes } from "viem";
import { describe, expect, it } from "vitest";
import { isSolanaSignature, solanaKeyHex, solanaKeyOfHex, withBlockhash } from "./solana.js";

const PAYER = address("9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM");
const MEMO = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
const OLD = "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn" as Blockhash;
const NEW = "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N" as Blockhash;

/** An unsigned v0 transaction as DLN hands one out: 0x-hex of its wire bytes. */
function dlnLikeTx(): string {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(PAYER, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: OLD, lastValidBlockHeight: 100n }, m),
    (m) => appendTransactionMessageInstruction({ programAddress: MEMO, data: new TextEncoder().encode("dln:0x01") }, m),
  );
  return bytesToHex(new Uint8Array(getTransactionEncoder().encode(compileTransaction(message))));
}

describe("Solana helpers of the bridge", () => {
  it("withBlockhash replaces only the lifetime token: 32 bytes differ, instructions and accounts are kept", () => {
    const tx = dlnLikeTx();
    const out = withBlockhash(tx, NEW);
    expect(out.length).toBe(tx.length);
    const a = hexToBytes(tx as `0x${string}`);
    const b = hexToBytes(out);
    expect(a.filter((x, i) => x !== b[i]).length).toBeLessThanOrEqual(32);
    const before = getCompiledTransactionMessageDecoder().decode(getTransactionDecoder().decode(a).messageBytes);
    const after = getCompiledTransactionMessageDecoder().decode(getTransactionDecoder().decode(b).messageBytes);
    expect(after.lifetimeToken).toBe(NEW);
    expect(before.lifetimeToken).toBe(OLD);
    expect({ ...after, lifetimeToken: OLD }).toEqual(before);
    expect(Object.values(getTransactionDecoder().decode(b).signatures)).toEqual([null]);
  });

  it("signatures are base58 of 64 bytes; keys convert to DLN's 32 order bytes and back", () => {
    const sig = getBase58Decoder().decode(new Uint8Array(64).fill(7));
    expect(isSolanaSignature(sig)).toBe(true);
    expect(isSolanaSignature(getBase58Decoder().decode(new Uint8Array(32).fill(7)))).toBe(false);
    expect(isSolanaSignature(`0x${"ab".repeat(64)}`)).toBe(false);
    expect(isSolanaSignature(sig.replace(/.$/, "0"))).toBe(false); // 0 is not base58
    expect(solanaKeyHex("11111111111111111111111111111111")).toBe(`0x${"00".repeat(32)}`);
    expect(solanaKeyOfHex(solanaKeyHex(PAYER))).toBe(PAYER);
    expect(() => solanaKeyHex("0x000000000000000000000000000000000000dEaD")).toThrow(/not a Solana address/);
  });
});
