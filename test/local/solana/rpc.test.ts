import { getAddMemoInstruction, LEGACY_MEMO_PROGRAM_ADDRESS_V3 } from "@solana-program/memo";
import { fetchMint, findAssociatedTokenPda, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createSolanaRpc,
  createTransactionMessage,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  getTransactionEncoder,
  isSolanaError,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransaction,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  type Address,
  type Blockhash,
  type KeyPairSigner,
  type Transaction,
  type TransactionMessageBytes,
} from "@solana/kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SOLANA } from "../../../chains/solana.js";
import { LOCAL_SOLANA, localSolanaKey } from "../../../local/solana/accounts.js";
import { startSolanaRpc, type SolanaRpc } from "../../../local/solana/rpc-server.js";
import { createLocalSolana, type ExecutedTransaction, type LocalSolana } from "../../../local/solana/svm.js";

// The local Solana's JSON-RPC front, driven by @solana/kit as the service and a wallet drive a real cluster. Its own
// LocalSolana on a clock the test moves (blockhash expiry), and the stack's front (SOLANA_RPC_URL) for what the stack
// places. No EVM chain involved.

const USDC = SOLANA.usdc.mint as Address;
const ORDER_ID = "0x" + "ab".repeat(32);

let now = Date.now();
let sol: LocalSolana;
let front: SolanaRpc;
let rpc: ReturnType<typeof createSolanaRpc>;
let payer: KeyPairSigner;
let payerUsdc: Address;
let escrowUsdc: Address;

/** A raw JSON-RPC call, for error bodies and the local_* methods kit does not know. */
async function call(
  url: string,
  method: string,
  params: unknown[] = [],
): Promise<{ result?: any; error?: { code: number; message: string; data?: any } }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()) as any;
}

const usdcOf = async (account: Address) => BigInt((await rpc.getTokenAccountBalance(account).send()).value.amount);
const lamportsOf = async (account: Address) => (await rpc.getBalance(account).send()).value;

/**
 * What DLN's create-tx hands the page: an unsigned v0 transaction (TransferChecked to the escrow + Memo(orderId)),
 * with DLN's own blockhash, as 0x-hex.
 */
function unsignedHex(amount: bigint, blockhash: string): string {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(payer.address, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as Blockhash, lastValidBlockHeight: 0n }, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getTransferCheckedInstruction({
            source: payerUsdc,
            mint: USDC,
            destination: escrowUsdc,
            authority: payer.address,
            amount,
            decimals: 6,
          }),
          getAddMemoInstruction({ memo: ORDER_ID }, { programAddress: LEGACY_MEMO_PROGRAM_ADDRESS_V3 }),
        ],
        m,
      ),
  );
  const tx = compileTransaction(message);
  return "0x" + Buffer.from(getTransactionEncoder().encode(tx)).toString("hex");
}

/** What the page does with it: decode, put in the RPC's latest blockhash (32 bytes change, nothing else), sign. */
async function signWithBlockhash(hex: string, blockhash: string): Promise<Transaction> {
  const decoded = getTransactionDecoder().decode(Buffer.from(hex.slice(2), "hex"));
  const compiled = getCompiledTransactionMessageDecoder().decode(decoded.messageBytes);
  const messageBytes = getCompiledTransactionMessageEncoder().encode({ ...compiled, lifetimeToken: blockhash }) as TransactionMessageBytes;
  return signTransaction([payer.keyPair], { ...decoded, messageBytes });
}

const send = (tx: Transaction) => rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: "base64" }).send();
const latest = async () => (await rpc.getLatestBlockhash().send()).value.blockhash;

beforeAll(async () => {
  sol = createLocalSolana({ now: () => now });
  front = await startSolanaRpc({ svm: sol });
  rpc = createSolanaRpc(front.url);
  payer = await localSolanaKey("rpc-test-payer").signer();
  expect((await call(front.url, "requestAirdrop", [payer.address, 2_000_000_000])).result).toEqual(expect.any(String));
  payerUsdc = (await call(front.url, "local_mintTo", [USDC, payer.address, "100000000"])).result.tokenAccount;
  escrowUsdc = (await call(front.url, "local_mintTo", [USDC, LOCAL_SOLANA.escrow.address, 0])).result.tokenAccount;
});

afterAll(async () => {
  await front?.close();
});

describe("the local Solana's JSON-RPC front", () => {
  it("@solana/kit's createSolanaRpc sends a v0 SPL TransferChecked + legacy Memo (MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr) built unsigned, hex-encoded, decoded, re-blockhashed with getLatestBlockhash, signed; balances move exactly", async () => {
    expect(LEGACY_MEMO_PROGRAM_ADDRESS_V3).toBe("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
    const dlnBlockhash = getBase58Decoder().decode(new Uint8Array(32).fill(7)); // a blockhash of DLN's cluster, unknown here
    const hex = unsignedHex(10_130_000n, dlnBlockhash);
    expect(Object.values(getTransactionDecoder().decode(Buffer.from(hex.slice(2), "hex")).signatures)).toEqual([null]);
    const [payerBefore, escrowBefore, solBefore] = [await usdcOf(payerUsdc), await usdcOf(escrowUsdc), await lamportsOf(payer.address)];

    // As DLN built it, the blockhash is not this cluster's: refused, nothing moves.
    const refused = await send(await signWithBlockhash(hex, dlnBlockhash)).catch((e: unknown) => e);
    expect(isSolanaError((refused as Error).cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)).toBe(true);
    expect(await usdcOf(payerUsdc)).toBe(payerBefore);

    const signed = await signWithBlockhash(hex, await latest());
    const signature = await send(signed);
    expect(signature).toBe(getSignatureFromTransaction(signed));
    expect(await usdcOf(payerUsdc)).toBe(payerBefore - 10_130_000n);
    expect(await usdcOf(escrowUsdc)).toBe(escrowBefore + 10_130_000n);
    expect(await lamportsOf(payer.address)).toBe(solBefore - 5000n); // one signature's fee, nothing else
  });

  it("a blockhash older than the window is refused (BlockhashNotFound); one inside it is accepted", async () => {
    const blockhash = await latest();
    const { value: valid } = await rpc.getLatestBlockhash().send();
    const before = await usdcOf(escrowUsdc);

    now += 150 * 400; // 150 slots later: the last slot it is valid in
    expect((await rpc.isBlockhashValid(blockhash as Blockhash).send()).value).toBe(true);
    expect(await rpc.getBlockHeight().send()).toBe(valid.lastValidBlockHeight);
    await send(await signWithBlockhash(unsignedHex(1_000_000n, "11111111111111111111111111111111"), blockhash));
    expect(await usdcOf(escrowUsdc)).toBe(before + 1_000_000n);

    now += 400; // one slot more: expired
    const stale = await signWithBlockhash(unsignedHex(2_000_000n, "11111111111111111111111111111111"), blockhash);
    const raw = await call(front.url, "sendTransaction", [getBase64EncodedWireTransaction(stale), { encoding: "base64" }]);
    expect(raw.error).toMatchObject({
      code: -32002,
      message: "Transaction simulation failed: Blockhash not found",
      data: { err: "BlockhashNotFound" },
    });
    const e = await send(stale).catch((e: unknown) => e);
    expect(isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)).toBe(true);
    expect(isSolanaError((e as Error).cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)).toBe(true);
    expect(await usdcOf(escrowUsdc)).toBe(before + 1_000_000n);

    // A page that asks again gets a fresh one, and that works.
    await send(await signWithBlockhash(unsignedHex(2_000_000n, "11111111111111111111111111111111"), await latest()));
    expect(await usdcOf(escrowUsdc)).toBe(before + 3_000_000n);
  });

  it("a second send of the same transaction is refused (AlreadyProcessed)", async () => {
    const before = await usdcOf(payerUsdc);
    const signed = await signWithBlockhash(unsignedHex(500_000n, "11111111111111111111111111111111"), await latest());
    await send(signed);
    const raw = await call(front.url, "sendTransaction", [getBase64EncodedWireTransaction(signed), { encoding: "base64" }]);
    expect(raw.error).toMatchObject({
      code: -32002,
      message: "Transaction simulation failed: This transaction has already been processed",
      data: { err: "AlreadyProcessed" },
    });
    const e = await send(signed).catch((e: unknown) => e);
    expect(isSolanaError((e as Error).cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)).toBe(true);
    expect(await usdcOf(payerUsdc)).toBe(before - 500_000n);
  });

  it("a transfer over the balance fails preflight with the token program's error and logs, and changes nothing", async () => {
    const before = await usdcOf(payerUsdc);
    const signed = await signWithBlockhash(unsignedHex(before + 1n, "11111111111111111111111111111111"), await latest());
    const raw = await call(front.url, "sendTransaction", [getBase64EncodedWireTransaction(signed), { encoding: "base64" }]);
    expect(raw.error).toMatchObject({
      code: -32002,
      message: "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1",
      data: { err: { InstructionError: [0, { Custom: 1 }] } },
    });
    expect(raw.error!.data.logs).toContain("Program log: Error: insufficient funds");
    expect(await usdcOf(payerUsdc)).toBe(before);
    expect((await rpc.getSignatureStatuses([getSignatureFromTransaction(signed)]).send()).value).toEqual([null]);
  });

  it("without preflight a failing transfer lands with its error and fee, as on Solana", async () => {
    const [usdcBefore, solBefore] = [await usdcOf(payerUsdc), await lamportsOf(payer.address)];
    const signed = await signWithBlockhash(unsignedHex(usdcBefore + 1n, "11111111111111111111111111111111"), await latest());
    const signature = await rpc
      .sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64", skipPreflight: true })
      .send();
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    expect(value[0]).toMatchObject({ err: { InstructionError: [0n, { Custom: 1n }] }, confirmationStatus: "finalized" });
    expect(await usdcOf(payerUsdc)).toBe(usdcBefore);
    expect(await lamportsOf(payer.address)).toBe(solBefore - 5000n);
    const tx = await rpc.getTransaction(signature, { encoding: "json", maxSupportedTransactionVersion: 0 }).send();
    expect(tx!.meta!.err).toEqual({ InstructionError: [0n, { Custom: 1n }] }); // kit reads numbers as bigints
  });

  it("USDC lives at the real mint address with 6 decimals", async () => {
    // The stack's front, as the service sees it (SOLANA_RPC_URL).
    const env = inject("stackEnv");
    expect(env.SOLANA_CLUSTER).toBe("localnet");
    const stackRpc = createSolanaRpc(env.SOLANA_RPC_URL!);
    const mint = await fetchMint(stackRpc, USDC);
    expect(mint.programAddress).toBe(TOKEN_PROGRAM_ADDRESS);
    expect(mint.data.decimals).toBe(6);
    expect(mint.data.mintAuthority).toMatchObject({ __option: "Some", value: LOCAL_SOLANA.usdcAuthority.address });
    const parsed = await call(env.SOLANA_RPC_URL!, "getAccountInfo", [USDC, { encoding: "jsonParsed" }]);
    expect(parsed.result.value.data).toMatchObject({
      program: "spl-token",
      parsed: { type: "mint", info: { decimals: 6, isInitialized: true } },
    });
  });

  it("getTokenAccountsByOwner filters by mint", async () => {
    const owner = localSolanaKey("rpc-test-holder").address;
    const other = localSolanaKey("rpc-test-other-mint").address;
    sol.placeMint(other, 9, LOCAL_SOLANA.usdcAuthority.address);
    await call(front.url, "local_mintTo", [USDC, owner, 2_500_000]);
    await call(front.url, "local_mintTo", [other, owner, "7000000000"]);

    const byMint = await rpc.getTokenAccountsByOwner(owner, { mint: USDC }, { encoding: "jsonParsed" }).send();
    expect(byMint.value).toHaveLength(1);
    const [ata] = await findAssociatedTokenPda({ owner, mint: USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    expect(byMint.value[0]!.pubkey).toBe(ata);
    expect(byMint.value[0]!.account.data.parsed.info).toMatchObject({
      mint: USDC,
      owner,
      state: "initialized",
      tokenAmount: { amount: "2500000", decimals: 6, uiAmountString: "2.5" },
    });

    const byProgram = await rpc.getTokenAccountsByOwner(owner, { programId: TOKEN_PROGRAM_ADDRESS }, { encoding: "base64" }).send();
    expect(byProgram.value.map((a) => a.account.data[1])).toEqual(["base64", "base64"]);
    expect(byProgram.value).toHaveLength(2);

    const unknownMint = await call(front.url, "getTokenAccountsByOwner", [
      owner,
      { mint: localSolanaKey("no-mint").address },
      { encoding: "base64" },
    ]);
    expect(unknownMint.error).toMatchObject({ code: -32602, message: "Invalid param: could not find mint" });
    expect((await rpc.getTokenAccountsByOwner(localSolanaKey("rpc-test-nobody").address, { mint: USDC }).send()).value).toEqual([]);
  });

  it("getSignatureStatuses/getTransaction report a sent transaction", async () => {
    const seen: ExecutedTransaction[] = [];
    const off = sol.onTransaction((tx) => seen.push(tx));
    const signed = await signWithBlockhash(unsignedHex(3_000_000n, "11111111111111111111111111111111"), await latest());
    const signature = await send(signed);
    off();

    const { value: statuses } = await rpc
      .getSignatureStatuses([signature, getBase58Decoder().decode(new Uint8Array(64).fill(1)) as never])
      .send();
    expect(statuses[0]).toMatchObject({ err: null, confirmationStatus: "finalized", status: { Ok: null } });
    expect(statuses[1]).toBeNull();

    const raw = await call(front.url, "getTransaction", [signature, { encoding: "json" }]);
    expect(raw.error?.code).toBe(-32015); // a v0 transaction needs maxSupportedTransactionVersion

    const tx = await rpc.getTransaction(signature, { encoding: "json", maxSupportedTransactionVersion: 0 }).send();
    expect(tx).not.toBeNull();
    expect(tx!.version).toBe(0);
    expect(tx!.meta!.err).toBeNull();
    expect(tx!.meta!.fee).toBe(5000n);
    expect(tx!.meta!.logMessages).toEqual(expect.arrayContaining(["Program log: Memo (len 66)", `Program log: ${ORDER_ID}`]));
    expect(tx!.transaction.signatures).toEqual([signature]);
    expect(tx!.transaction.message.accountKeys[0]).toBe(payer.address);
    const amountOf = (balances: readonly { accountIndex: number; uiTokenAmount: { amount: string } }[] | undefined, account: Address) =>
      BigInt(balances!.find((b) => tx!.transaction.message.accountKeys[b.accountIndex] === account)!.uiTokenAmount.amount);
    expect(amountOf(tx!.meta!.postTokenBalances, escrowUsdc) - amountOf(tx!.meta!.preTokenBalances, escrowUsdc)).toBe(3_000_000n);
    expect(amountOf(tx!.meta!.preTokenBalances, payerUsdc) - amountOf(tx!.meta!.postTokenBalances, payerUsdc)).toBe(3_000_000n);

    const history = await rpc.getSignaturesForAddress(payer.address, { limit: 2 }).send();
    expect(history[0]).toMatchObject({ signature, err: null, memo: `[66] ${ORDER_ID}`, confirmationStatus: "finalized" });
    expect(history).toHaveLength(2);

    // The in-process hook (the DLN stand-in's): the same transaction, decoded.
    expect(seen.map((t) => t.signature)).toEqual([signature]);
    expect(seen[0]!.memos).toEqual([ORDER_ID]);
    expect(seen[0]!.instructions.map((i) => i.programAddress)).toEqual([TOKEN_PROGRAM_ADDRESS, LEGACY_MEMO_PROGRAM_ADDRESS_V3]);
    expect(seen[0]!.instructions[0]!.accounts).toEqual([payerUsdc, USDC, escrowUsdc, payer.address]);
  });

  it("answers a batch, and JSON-RPC errors for unknown methods and bad params", async () => {
    const res = await fetch(front.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([
        { jsonrpc: "2.0", id: 1, method: "getSlot" },
        { jsonrpc: "2.0", id: 2, method: "eth_blockNumber" },
        { jsonrpc: "2.0", id: 3, method: "getBalance", params: ["0x000000000000000000000000000000000000dEaD"] },
      ]),
    });
    const body = (await res.json()) as any[];
    expect(body).toHaveLength(3);
    expect(body[0]).toMatchObject({ id: 1, result: sol.slot() });
    expect(body[1]).toMatchObject({ id: 2, error: { code: -32601 } });
    expect(body[2]).toMatchObject({ id: 3, error: { code: -32602 } });
  });
});
