import { getAddMemoInstruction, LEGACY_MEMO_PROGRAM_ADDRESS_V3 } from "@solana-program/memo";
import { getTransferSolInstruction } from "@solana-program/system";
import { getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction } from "@solana-program/token";
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getBase58Encoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from "@solana/kit";
import { bytesToHex, type Hex } from "viem";
import { SOLANA } from "../../chains/solana.js";
import { logger } from "../../core/log.js";
import { solanaKeyOfHex } from "../../modules/bridge/index.js";
import { LOCAL_SOLANA, type LocalSolanaKey } from "../solana/accounts.js";
import { associatedTokenAddress, LEGACY_MEMO_PROGRAM, MEMO_PROGRAM, SYSTEM_PROGRAM, TOKEN_PROGRAM } from "../solana/spl.js";
// Types only: svm.ts loads litesvm (a native module), which the stack loads on demand.
import type { ExecutedTransaction, LocalSolana } from "../solana/svm.js";
import { GIVE, type DlnOrder } from "./abi.js";

// The give side of Solana-source orders (DLN's chain 7565164) in the local stand-in. DESIGN option (b): there is no
// DLN Solana program here. An order "is created" when a transaction lands that moves exactly the order's giveAmount of
// USDC into the stand-in's escrow (the associated token account of LOCAL_SOLANA.escrow, a plain key) with a legacy Memo
// `dln:<orderId>` (and the creation fixFee in SOL to the escrow key). The escrow key pays out on unlock (to the solver,
// memo `dln-unlock:<orderId>`) and on cancel (to the cancel beneficiary, memo `dln-cancel:<orderId>`); those
// transactions are what ClaimedUnlock and ClaimedOrderCancel are read from. DLN's program accounts (order PDAs, nonces,
// the give-order state) are not reproduced. See docs/bridge.md ("Solana source").

/**
 * DLN's fixed creation fee on Solana (DlnSource's `globalFixedNativeFee` there): 0.015 SOL in lamports. The create
 * transaction pays it to the escrow key; a cancel refunds it, an unlock leaves it there (the protocol's).
 */
export const SOLANA_FIX_FEE = 15_000_000n;

/** TransferChecked's instruction index in the SPL Token program. */
const TRANSFER_CHECKED = 12;
/** The System program's Transfer index. */
const SYSTEM_TRANSFER = 2;
const ID_RE = /^0x[0-9a-f]{64}$/;

export type SolanaOrderState = {
  orderId: Hex;
  order: DlnOrder;
  /** The maker (makerSrc) as a base58 key: whose USDC the create transaction must move. */
  maker: Address;
  /** Lamports the create transaction pays the escrow (refunded on cancel). */
  fixFee: bigint;
  /** GIVE.NotSet while only quoted, then Created, ClaimedUnlock or ClaimedCancel. */
  give: number;
  /** Signature of the transaction that created it. */
  createdTx?: Signature;
  /** Signature of the escrow's payout (unlock or cancel). */
  claimTx?: Signature;
};

const log = logger("bridge-solana-orders");
const u64 = (data: Uint8Array, at: number) => new DataView(data.buffer, data.byteOffset + at, 8).getBigUint64(0, true);
const memoIds = (tx: ExecutedTransaction, prefix: string): Hex[] =>
  tx.instructions
    .filter((ix) => ix.programAddress === LEGACY_MEMO_PROGRAM || ix.programAddress === MEMO_PROGRAM)
    .map((ix) => new TextDecoder().decode(ix.data))
    .filter((m) => m.startsWith(prefix) && ID_RE.test(m.slice(prefix.length)))
    .map((m) => m.slice(prefix.length) as Hex);

/** The SPL TransferChecked instructions of a transaction: accounts [source, mint, destination, authority]. */
function transfersChecked(tx: ExecutedTransaction) {
  return tx.instructions
    .filter((ix) => ix.programAddress === TOKEN_PROGRAM && ix.data.length === 10 && ix.data[0] === TRANSFER_CHECKED)
    .map((ix) => ({
      source: ix.accounts[0],
      mint: ix.accounts[1],
      destination: ix.accounts[2],
      authority: ix.accounts[3],
      amount: u64(ix.data, 1),
      decimals: ix.data[9],
    }));
}

/** System transfers of a transaction (lamports from → to). */
function solTransfers(tx: ExecutedTransaction) {
  return tx.instructions
    .filter((ix) => ix.programAddress === SYSTEM_PROGRAM && ix.data.length === 12 && ix.data[0] === SYSTEM_TRANSFER && !ix.data[1])
    .map((ix) => ({ from: ix.accounts[0], to: ix.accounts[1], lamports: u64(ix.data, 4) }));
}

/**
 * Solana-source orders: quoted by create-tx, created and paid out by transactions seen through
 * `LocalSolana.onTransaction`, paid out by the escrow key on the solver's request.
 *
 *   const book = await SolanaOrderBook.create(svm);
 *   book.quote(orderId, order, SOLANA_FIX_FEE);
 *   // … the payer's transaction lands …
 *   book.get(orderId)?.give; // GIVE.Created
 *   await book.claimUnlock(orderId, LOCAL_SOLANA.solver.address); // escrowed USDC → the solver's token account
 */
export class SolanaOrderBook {
  private readonly orders = new Map<Hex, SolanaOrderState>();
  private readonly bySignature = new Map<string, Hex[]>();
  private readonly unsubscribe: () => void;

  private constructor(
    readonly svm: LocalSolana,
    readonly escrow: LocalSolanaKey,
    /** The escrow's USDC token account: where orders' USDC goes. */
    readonly escrowAta: Address,
    readonly mint: Address,
  ) {
    this.unsubscribe = svm.onTransaction((tx) => this.see(tx));
  }

  /** The book over `svm`, with the escrow's USDC token account in place (so create transactions pay no rent for it). */
  static async create(svm: LocalSolana, escrow: LocalSolanaKey = LOCAL_SOLANA.escrow): Promise<SolanaOrderBook> {
    const mint = SOLANA.usdc.mint as Address;
    const escrowAta = await svm.mintTo(mint, escrow.address, 0n);
    return new SolanaOrderBook(svm, escrow, escrowAta, mint);
  }

  close(): void {
    this.unsubscribe();
  }

  /** Remembers a quoted order (create-tx), so that its create transaction is recognised. */
  quote(orderId: Hex, order: DlnOrder, fixFee: bigint): SolanaOrderState {
    const id = orderId.toLowerCase() as Hex;
    let s = this.orders.get(id);
    if (!s) this.orders.set(id, (s = { orderId: id, order, maker: solanaKeyOfHex(order.makerSrc) as Address, fixFee, give: GIVE.NotSet }));
    return s;
  }

  get(orderId: string): SolanaOrderState | undefined {
    return this.orders.get(orderId.toLowerCase() as Hex);
  }

  /** The order's give status (DLN's OrderGiveStatus numbers); NotSet for an id this book does not know. */
  giveStatus(orderId: string): number {
    return this.get(orderId)?.give ?? GIVE.NotSet;
  }

  /** Orders a create transaction paid for (Created, then claimed). */
  created(): SolanaOrderState[] {
    return [...this.orders.values()].filter((s) => s.give !== GIVE.NotSet);
  }

  /** Ids of the orders a transaction (base58 signature) created; [] when none or not (yet) landed. */
  orderIdsOfSignature(signature: string): Hex[] {
    return this.bySignature.get(signature) ?? [];
  }

  /**
   * DLN's unsigned create transaction (0x-hex of a serialized v0 VersionedTransaction, signatures zeroed) for a quoted
   * order: fee payer the maker; CreateAssociatedTokenIdempotent(escrow's USDC account), TransferChecked(maker's USDC
   * account → escrow, giveAmount, 6 decimals), the fixFee in SOL to the escrow key when > 0, Memo `dln:<orderId>`;
   * blockhash the cluster's current one.
   */
  async createTransactionHex(s: SolanaOrderState): Promise<Hex> {
    const payer = createNoopSigner(s.maker);
    const payerAta = await associatedTokenAddress(s.maker, this.mint);
    const instructions: Instruction[] = [
      getCreateAssociatedTokenIdempotentInstruction({ payer, ata: this.escrowAta, owner: this.escrow.address, mint: this.mint }),
      getTransferCheckedInstruction({
        source: payerAta,
        mint: this.mint,
        destination: this.escrowAta,
        authority: payer,
        amount: s.order.giveAmount,
        decimals: SOLANA.usdc.decimals,
      }),
      ...(s.fixFee > 0n ? [getTransferSolInstruction({ source: payer, destination: this.escrow.address, amount: s.fixFee })] : []),
      getAddMemoInstruction({ memo: `dln:${s.orderId}` }, { programAddress: LEGACY_MEMO_PROGRAM_ADDRESS_V3 }),
    ];
    const { blockhash, lastValidBlockHeight } = this.svm.latestBlockhash();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(s.maker, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: blockhash as Blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) },
          m,
        ),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    return bytesToHex(new Uint8Array(getTransactionEncoder().encode(compileTransaction(message))));
  }

  /** Pays a Created order's escrowed USDC to `taker`'s USDC account (memo `dln-unlock:<id>`): ClaimedUnlock. */
  claimUnlock(orderId: string, taker: Address): Promise<Signature> {
    return this.payOut(orderId, taker, "dln-unlock", 0n);
  }

  /**
   * Refunds a Created order to the cancel beneficiary: its USDC to the beneficiary's USDC account (created when missing,
   * rent paid by the escrow) and the fixFee in SOL (memo `dln-cancel:<id>`): ClaimedOrderCancel.
   */
  claimCancel(orderId: string, beneficiary: Address): Promise<Signature> {
    const s = this.get(orderId);
    return this.payOut(orderId, beneficiary, "dln-cancel", s?.fixFee ?? 0n);
  }

  private async payOut(orderId: string, to: Address, memo: "dln-unlock" | "dln-cancel", lamports: bigint): Promise<Signature> {
    const s = this.get(orderId);
    if (!s || s.give !== GIVE.Created) throw new Error(`Solana order ${orderId} is not Created (give status ${s?.give ?? "unknown"})`);
    const signer: KeyPairSigner = await this.escrow.signer();
    const toAta = await associatedTokenAddress(to, this.mint);
    const instructions: Instruction[] = [
      getCreateAssociatedTokenIdempotentInstruction({ payer: signer, ata: toAta, owner: to, mint: this.mint }),
      getTransferCheckedInstruction({
        source: this.escrowAta,
        mint: this.mint,
        destination: toAta,
        authority: signer,
        amount: s.order.giveAmount,
        decimals: SOLANA.usdc.decimals,
      }),
      ...(lamports > 0n ? [getTransferSolInstruction({ source: signer, destination: to, amount: lamports })] : []),
      getAddMemoInstruction({ memo: `${memo}:${s.orderId}` }, { programAddress: LEGACY_MEMO_PROGRAM_ADDRESS_V3 }),
    ];
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(this.lifetime(), m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const r = this.svm.send(await signTransactionMessageWithSigners(message));
    if (r.err) throw new Error(`${memo} of ${s.orderId} failed: ${JSON.stringify(r.err)} ${r.logs.slice(-3).join(" | ")}`);
    return r.signature;
  }

  private lifetime() {
    const { blockhash, lastValidBlockHeight } = this.svm.latestBlockhash();
    return { blockhash: blockhash as Blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) };
  }

  /** One landed transaction: a create of a quoted order, or the escrow's payout of a Created one. */
  private see(tx: ExecutedTransaction) {
    if (tx.err) return;
    for (const id of memoIds(tx, "dln:")) this.seeCreate(tx, id);
    for (const [prefix, give] of [
      ["dln-unlock:", GIVE.ClaimedUnlock],
      ["dln-cancel:", GIVE.ClaimedCancel],
    ] as const)
      for (const id of memoIds(tx, prefix)) this.seeClaim(tx, id, give);
  }

  private seeCreate(tx: ExecutedTransaction, id: Hex) {
    const s = this.orders.get(id);
    if (!s) return log.warn({ signature: tx.signature, orderId: id }, "create memo of an order this stand-in never quoted: ignored");
    if (s.give !== GIVE.NotSet)
      return log.warn(
        { signature: tx.signature, orderId: id },
        "second create transaction of an order: ignored (its funds stay in the escrow)",
      );
    const paid = transfersChecked(tx).some(
      (t) =>
        t.destination === this.escrowAta &&
        t.mint === this.mint &&
        t.authority === s.maker &&
        t.amount === s.order.giveAmount &&
        t.decimals === SOLANA.usdc.decimals,
    );
    const feePaid =
      s.fixFee === 0n || solTransfers(tx).some((t) => t.from === s.maker && t.to === this.escrow.address && t.lamports === s.fixFee);
    if (!paid || !feePaid)
      return log.warn({ signature: tx.signature, orderId: id }, "create memo without the order's exact escrow transfer: not created");
    s.give = GIVE.Created;
    s.createdTx = tx.signature;
    this.bySignature.set(tx.signature, [...(this.bySignature.get(tx.signature) ?? []), id]);
  }

  private seeClaim(tx: ExecutedTransaction, id: Hex, give: number) {
    const s = this.orders.get(id);
    // Only the escrow's own transfer of this order's amount out of the escrow account counts.
    const out = transfersChecked(tx).some(
      (t) => t.source === this.escrowAta && t.authority === this.escrow.address && t.amount === s?.order.giveAmount,
    );
    if (!s || s.give !== GIVE.Created || !out) return;
    s.give = give;
    s.claimTx = tx.signature;
  }
}

/**
 * A base58 transaction signature (64 bytes): what `GET /v1.0/dln/tx/{signature}/order-ids` takes for Solana.
 *
 *   isSignature("5VERv8NMvzbJ…") // true;  isSignature("0x12…") // false
 */
export function isSignature(value: string): boolean {
  if (!/^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(value)) return false;
  try {
    return getBase58Encoder().encode(value).length === 64;
  } catch {
    return false;
  }
}
