import {
  address,
  createSolanaRpc,
  getBase58Decoder,
  getBase58Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type Blockhash,
} from "@solana/kit";
import { bytesToHex, hexToBytes, type Hex } from "viem";
import { isSolanaAddress, SOLANA } from "../../chains/solana.js";
import type { Config } from "../../core/config.js";
import { Unavailable } from "../../core/errors.js";

// Solana payers of cross-chain payments: DLN's Solana source (srcChainId 7565164). The payer's wallet signs DLN's
// transaction; the service refreshes its blockhash, follows the order by the transaction's signature, and cancels it
// on the EVM destination with sendSolanaOrderCancel naming the payer's key. SOLANA_RPC_URL is read here only.

export const SOLANA_CHAIN_ID = SOLANA.dlnChainId;
export const SOLANA_OFF = "Cross-chain payments from Solana are not available";
const TIMEOUT_MS = 10_000;

/**
 * A transaction signature: base58 of 64 bytes.
 * @example isSolanaSignature("5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW") // true
 */
export function isSolanaSignature(value: string): boolean {
  if (!/^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(value)) return false;
  try {
    return getBase58Encoder().encode(value).length === 64;
  } catch {
    return false;
  }
}

/**
 * A base58 Solana key as DLN order bytes (0x-hex of its 32 bytes), and back.
 * @example solanaKeyHex("11111111111111111111111111111111") // "0x0000…0000" (32 bytes)
 */
export function solanaKeyHex(key: string): Hex {
  if (!isSolanaAddress(key)) throw new RangeError(`not a Solana address: ${key}`);
  return bytesToHex(new Uint8Array(getBase58Encoder().encode(key)));
}

/** @example solanaKeyOfHex("0x0000…0000") // "11111111111111111111111111111111" */
export function solanaKeyOfHex(hex: Hex): string {
  return getBase58Decoder().decode(hexToBytes(hex));
}

/**
 * DLN's Solana transaction (0x-hex of a serialized, unsigned VersionedTransaction) with another recent blockhash: DLN's
 * own is old by the time the payer signs, and deBridge's integration example replaces it the same way. Only the message's
 * lifetime token changes (address lookup tables and instructions are kept byte for byte); signatures are emptied.
 * @example withBlockhash(q.tx.data, "9xQe…") // "0x01000…" (same length)
 */
export function withBlockhash(txHex: string, blockhash: string): Hex {
  const tx = getTransactionDecoder().decode(hexToBytes(txHex as Hex));
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const messageBytes = getCompiledTransactionMessageEncoder().encode({ ...message, lifetimeToken: blockhash as Blockhash });
  const signatures = Object.fromEntries(Object.keys(tx.signatures).map((k) => [k, null]));
  return bytesToHex(new Uint8Array(getTransactionEncoder().encode({ messageBytes, signatures } as never)));
}

/** The configured Solana RPC, or Unavailable `Cross-chain payments from Solana are not available`. */
function rpcOf(config: Pick<Config, "SOLANA_RPC_URL">) {
  if (!config.SOLANA_RPC_URL) throw new Unavailable(SOLANA_OFF);
  return createSolanaRpc(config.SOLANA_RPC_URL);
}

async function call<T>(what: string, f: (signal: AbortSignal) => Promise<T>): Promise<T> {
  try {
    return await f(AbortSignal.timeout(TIMEOUT_MS));
  } catch (e) {
    throw new Unavailable(`Solana RPC ${what} failed: ${(e as Error).message.split("\n")[0]}`);
  }
}

/** The cluster's latest blockhash (SOLANA_RPC_URL). Throws Unavailable. */
export async function latestBlockhash(config: Pick<Config, "SOLANA_RPC_URL">): Promise<string> {
  const rpc = rpcOf(config);
  const r = await call("getLatestBlockhash", (abortSignal) => rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal }));
  return r.value.blockhash;
}

/** A Solana owner's balances of the tokens a payer may bridge from, and of SOL (for fees), in smallest units. */
export type SolanaHoldings = {
  native: { symbol: "SOL"; decimals: number; units: string };
  tokens: { mint: string; symbol: string; decimals: number; units: string }[];
};

/**
 * What a Solana wallet holds of SOLANA.tokens and SOL, read from SOLANA_RPC_URL (the page's wallet has no read API,
 * and RPC URLs never reach the browser). Throws Unavailable.
 * @example (await solanaHoldings(config, owner)).tokens[0] // { mint: "EPjF…Dt1v", symbol: "USDC", decimals: 6, units: "25000000" }
 */
export async function solanaHoldings(config: Pick<Config, "SOLANA_RPC_URL">, owner: string): Promise<SolanaHoldings> {
  const rpc = rpcOf(config);
  const who = address(owner);
  const [lamports, ...accounts] = await Promise.all([
    call("getBalance", (abortSignal) => rpc.getBalance(who, { commitment: "confirmed" }).send({ abortSignal })),
    ...SOLANA.tokens.map((t) =>
      call("getTokenAccountsByOwner", (abortSignal) =>
        rpc
          .getTokenAccountsByOwner(who, { mint: address(t.mint) }, { encoding: "jsonParsed", commitment: "confirmed" })
          .send({ abortSignal }),
      ),
    ),
  ]);
  return {
    native: { symbol: "SOL", decimals: SOLANA.decimals, units: lamports.value.toString() },
    tokens: SOLANA.tokens.map((t, i) => ({
      mint: t.mint,
      symbol: t.symbol,
      decimals: t.decimals,
      units: accounts[i]!.value.reduce(
        (sum, a) =>
          sum + BigInt((a.account.data as { parsed: { info: { tokenAmount: { amount: string } } } }).parsed.info.tokenAmount.amount),
        0n,
      ).toString(),
    })),
  };
}
