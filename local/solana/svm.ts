import {
  getBase58Decoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionDecoder,
  getTransactionEncoder,
  lamports,
  type Address,
  type CompiledTransactionMessage,
  type CompiledTransactionMessageWithLifetime,
  type EncodedAccount,
  type Signature,
  type Transaction,
  type TransactionMessageBytes,
} from "@solana/kit";
import { FailedTransactionMetadata, LiteSVM } from "litesvm";
import { SOLANA } from "../../chains/solana.js";
import { logger } from "../../core/log.js";
import { LOCAL_SOLANA } from "./accounts.js";
import { BlockhashWindow, type BlockhashWindowOptions, type LatestBlockhash } from "./blockhash-window.js";
import {
  associatedTokenAddress,
  COMPUTE_BUDGET_PROGRAM,
  decodeMint,
  decodeTokenAccount,
  encodeMint,
  encodeTokenAccount,
  isTokenProgram,
  LEGACY_MEMO_PROGRAM,
  MEMO_PROGRAM,
  SYSTEM_PROGRAM,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  uiTokenAmount,
  type Mint,
  type TokenAccount,
  type UiTokenAmount,
} from "./spl.js";
import { transactionErrorJson, type SolanaTransactionError } from "./tx-error.js";

// The local Solana: litesvm (the Solana runtime in this process, https://github.com/LiteSVM/litesvm) with what a
// cluster adds around it: slots from the clock, a window of recent blockhashes, a history of executed transactions
// with their balances, and hooks. Not a validator: no gossip, no forks, everything final at once, nothing kept across
// restarts. Served over JSON-RPC by local/solana/rpc-server.ts. See docs/solana.md.

export type DecodedInstruction = { programAddress: Address; accounts: Address[]; data: Uint8Array };

export type TokenBalance = {
  accountIndex: number;
  mint: Address;
  owner: Address;
  programId: Address;
  uiTokenAmount: UiTokenAmount;
};

/** A transaction that landed (succeeded, or failed in execution with its fee charged). */
export type ExecutedTransaction = {
  signature: Signature;
  slot: number;
  /** Unix seconds. */
  blockTime: number;
  version: "legacy" | 0;
  /** The wire bytes as sent. */
  wire: Uint8Array;
  transaction: Transaction;
  message: CompiledMessage;
  /** Static keys, then those loaded from lookup tables (writable, then read-only): what instruction indices point into. */
  accountKeys: Address[];
  loadedAddresses: { writable: Address[]; readonly: Address[] };
  instructions: DecodedInstruction[];
  /** Texts of Memo program instructions. */
  memos: string[];
  logs: string[];
  err: SolanaTransactionError | null;
  fee: bigint;
  computeUnitsConsumed: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
};

export type SendOutcome = {
  signature: Signature;
  /** null when the transaction landed without error. */
  err: SolanaTransactionError | null;
  logs: string[];
  unitsConsumed: bigint;
  /** Set when it landed (with `err` too when it failed in execution: only without preflight, as on Solana). */
  landed?: ExecutedTransaction;
};

export type SimulateOutcome = {
  err: SolanaTransactionError | null;
  logs: string[];
  unitsConsumed: bigint;
  /** The blockhash put in with `replaceRecentBlockhash`. */
  replacementBlockhash?: LatestBlockhash;
  /** Accounts the transaction would write, as they would be after it (when it succeeds). */
  postAccounts?: EncodedAccount[];
};

export type SignatureStatus = { slot: number; blockTime: number; err: SolanaTransactionError | null };

export type SignatureInfo = SignatureStatus & { signature: Signature; memo: string | null };

export type TransactionListener = (tx: ExecutedTransaction) => void;

export type LocalSolanaOptions = BlockhashWindowOptions & {
  /** Executed transactions kept for getTransaction and friends (oldest dropped first); default 100 000. */
  historyLimit?: number;
};

/** Bytes that are no transaction (wire format) or a message litesvm cannot run. */
export class InvalidTransaction extends Error {}

const log = logger("local-solana");
const b58 = getBase58Decoder();
const NO_SIGNATURE = b58.decode(new Uint8Array(64)) as Signature;
const LAMPORTS_PER_SIGNATURE = 5000n;
/** Address lookup table accounts: 56 bytes of metadata, then 32-byte addresses. */
const LOOKUP_TABLE_META_SIZE = 56;

/** A legacy or v0 message (litesvm runs no v1). */
export type CompiledMessage = Exclude<CompiledTransactionMessage, { version: 1 }> & CompiledTransactionMessageWithLifetime;

/**
 * litesvm with slots, a blockhash window, history and hooks: the stack's Solana.
 *
 *   const sol = new LocalSolana();
 *   sol.placeMint(SOLANA.usdc.mint, 6, LOCAL_SOLANA.usdcAuthority.address);
 *   await sol.mintTo(SOLANA.usdc.mint, payer, 25_000_000n);
 *   sol.onTransaction((tx) => console.log(tx.signature, tx.memos));
 *   sol.send(wireBytes); // { signature, err: null, landed }
 */
export class LocalSolana {
  readonly svm: LiteSVM;
  readonly window: BlockhashWindow;
  private readonly now: () => number;
  private readonly historyLimit: number;
  private readonly history = new Map<Signature, ExecutedTransaction>();
  private readonly airdrops = new Map<Signature, SignatureInfo>();
  /** Address → signatures touching it, oldest first. */
  private readonly byAddress = new Map<Address, Signature[]>();
  private readonly listeners = new Set<TransactionListener>();

  constructor(opts: LocalSolanaOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.historyLimit = opts.historyLimit ?? 100_000;
    // The window below checks blockhashes (litesvm alone takes only the latest one).
    this.svm = new LiteSVM().withBlockhashCheck(false);
    const startSlot = opts.startSlot ?? 1;
    this.setClock(startSlot);
    this.window = new BlockhashWindow(
      this.svm.latestBlockhash(),
      (slot) => {
        this.svm.expireBlockhash();
        this.setClock(slot);
        return this.svm.latestBlockhash();
      },
      { ...opts, now: this.now, startSlot },
    );
  }

  private setClock(slot: number) {
    const clock = this.svm.getClock();
    clock.slot = BigInt(slot);
    clock.epoch = BigInt(Math.floor(slot / SLOTS_PER_EPOCH));
    clock.unixTimestamp = BigInt(Math.floor(this.now() / 1000));
    this.svm.setClock(clock);
  }

  slot(): number {
    return this.window.slot();
  }

  /** Unix seconds of the current slot. */
  blockTime(): number {
    return Math.floor(this.now() / 1000);
  }

  latestBlockhash(): LatestBlockhash {
    return this.window.latest();
  }

  /** Moves time on (blockhashes older than 150 slots expire), as `local_advanceSlots` does over RPC. */
  advanceSlots(slots: number): number {
    return this.window.advance(slots);
  }

  /** Calls `listener` with each transaction that lands (in this process, before sendTransaction answers). */
  onTransaction(listener: TransactionListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /**
   * Runs a transaction as sendTransaction does: refused (nothing changes) when its blockhash is not recent, it was
   * processed before, a signature is wrong, or (with preflight) it would fail; else it lands.
   */
  send(input: Uint8Array | Transaction, opts: { skipPreflight?: boolean } = {}): SendOutcome {
    const { tx, wire } = this.decode(input);
    const message = decodeMessage(tx);
    const signature = signatureOf(tx, message);
    const refused = (err: SolanaTransactionError, logs: string[] = [], unitsConsumed = 0n): SendOutcome => ({
      signature,
      err,
      logs,
      unitsConsumed,
    });
    const early = this.precheck(message, signature);
    if (early) return refused(early);
    const loaded = this.loadedAddresses(message);
    const accountKeys = [...message.staticAccounts, ...loaded.writable, ...loaded.readonly];
    const pre = this.snapshot(accountKeys);
    if (!opts.skipPreflight) {
      const sim = this.svm.simulateTransaction(tx);
      if (sim instanceof FailedTransactionMetadata) return refused(transactionErrorJson(sim.err()), sim.meta().logs(), unitsOf(sim.meta()));
    }
    const result = this.svm.sendTransaction(tx);
    const failed = result instanceof FailedTransactionMetadata;
    const meta = failed ? result.meta() : result;
    const err = failed ? transactionErrorJson(result.err()) : null;
    // A failure before execution (fee payer, signatures, account loading) never lands; one in execution does.
    if (failed && !this.svm.getTransaction(signature)) return refused(err!, meta.logs(), unitsOf(meta));
    const post = this.snapshot(accountKeys);
    const instructions = message.instructions.map((ix) => ({
      programAddress: accountKeys[ix.programAddressIndex]!,
      accounts: (ix.accountIndices ?? []).map((i) => accountKeys[i]!),
      data: new Uint8Array(ix.data ?? []),
    }));
    const landed: ExecutedTransaction = {
      signature,
      slot: this.slot(),
      blockTime: this.blockTime(),
      version: message.version === "legacy" ? "legacy" : 0,
      wire,
      transaction: tx,
      message,
      accountKeys,
      loadedAddresses: loaded,
      instructions,
      memos: instructions
        .filter((ix) => ix.programAddress === LEGACY_MEMO_PROGRAM || ix.programAddress === MEMO_PROGRAM)
        .map((ix) => new TextDecoder().decode(ix.data)),
      logs: meta.logs(),
      err,
      fee: feeOf(message, instructions),
      computeUnitsConsumed: unitsOf(meta),
      preBalances: pre.balances,
      postBalances: post.balances,
      preTokenBalances: pre.tokens,
      postTokenBalances: post.tokens,
    };
    this.remember(landed);
    return { signature, err, logs: landed.logs, unitsConsumed: landed.computeUnitsConsumed, landed };
  }

  /**
   * Runs a transaction without keeping its effects, as simulateTransaction does (signatures not checked unless
   * `sigVerify`; `replaceRecentBlockhash` runs it with the latest blockhash instead of its own).
   */
  simulate(input: Uint8Array | Transaction, opts: { sigVerify?: boolean; replaceRecentBlockhash?: boolean } = {}): SimulateOutcome {
    let { tx } = this.decode(input);
    let message = decodeMessage(tx);
    let replacementBlockhash: LatestBlockhash | undefined;
    if (opts.replaceRecentBlockhash) {
      replacementBlockhash = this.latestBlockhash();
      message = { ...message, lifetimeToken: replacementBlockhash.blockhash } as CompiledMessage;
      tx = { ...tx, messageBytes: getCompiledTransactionMessageEncoder().encode(message) as TransactionMessageBytes };
    }
    const early = this.precheck(message, signatureOf(tx, message));
    if (early) return { err: early, logs: [], unitsConsumed: 0n, replacementBlockhash };
    this.svm.withSigverify(opts.sigVerify ?? false);
    try {
      const sim = this.svm.simulateTransaction(tx);
      if (sim instanceof FailedTransactionMetadata)
        return { err: transactionErrorJson(sim.err()), logs: sim.meta().logs(), unitsConsumed: unitsOf(sim.meta()), replacementBlockhash };
      return {
        err: null,
        logs: sim.meta().logs(),
        unitsConsumed: unitsOf(sim.meta()),
        replacementBlockhash,
        postAccounts: sim.postAccounts(),
      };
    } finally {
      this.svm.withSigverify(true);
    }
  }

  /** Credits lamports from litesvm's faucet (a real transfer with a signature, as requestAirdrop answers). */
  airdrop(address: Address, amount: bigint): Signature {
    const r = this.svm.airdrop(address, lamports(amount));
    if (!r || r instanceof FailedTransactionMetadata) throw new Error(`airdrop to ${address} failed: ${r ? String(r.err()) : "no result"}`);
    const signature = b58.decode(r.signature()) as Signature;
    this.airdrops.set(signature, { signature, slot: this.slot(), blockTime: this.blockTime(), err: null, memo: null });
    this.index(signature, [address]);
    return signature;
  }

  /**
   * Places an initialized SPL mint at `mint` (any address, e.g. Circle's USDC), as `anvil_setCode` places a contract:
   * no transaction, no keypair of the mint needed. An existing mint there keeps its supply.
   */
  placeMint(mint: Address, decimals: number, authority: Address | null, opts: { freezeAuthority?: Address | null } = {}): void {
    const supply = this.mint(mint)?.supply ?? 0n;
    const data = encodeMint({
      mintAuthority: authority,
      supply,
      decimals,
      isInitialized: true,
      freezeAuthority: opts.freezeAuthority ?? null,
    });
    this.setAccount(mint, TOKEN_PROGRAM, data);
  }

  /**
   * Credits `units` (smallest units) of a mint to the owner's associated token account, creating it when missing,
   * and raises the supply: an account write, as a "deal" cheat code is on the EVM side. Returns the token account.
   */
  async mintTo(mint: Address, owner: Address, units: bigint): Promise<Address> {
    if (units < 0n) throw new Error("units must be ≥ 0");
    const tokenProgram = this.getAccount(mint)?.programAddress ?? TOKEN_PROGRAM;
    const ata = await associatedTokenAddress(owner, mint, tokenProgram);
    // No await from here on: the read-modify-write below is atomic in this process.
    const m = this.mint(mint);
    if (!m) throw new Error(`no mint at ${mint}`);
    if (tokenProgram !== TOKEN_PROGRAM)
      throw new Error(`mintTo places classic SPL Token accounts only; ${mint} is owned by ${tokenProgram}`);
    const existing = this.tokenAccount(ata);
    const account: TokenAccount = existing ?? {
      mint,
      owner,
      amount: 0n,
      delegate: null,
      state: 1,
      isNative: null,
      delegatedAmount: 0n,
      closeAuthority: null,
    };
    this.setAccount(ata, tokenProgram, encodeTokenAccount({ ...account, amount: account.amount + units }));
    this.setAccount(mint, tokenProgram, encodeMint({ ...m, supply: m.supply + units }));
    return ata;
  }

  getAccount(address: Address): EncodedAccount | null {
    const a = this.svm.getAccount(address);
    return a.exists ? a : null;
  }

  balance(address: Address): bigint {
    return this.svm.getBalance(address) ?? 0n;
  }

  mint(address: Address): Mint | undefined {
    const a = this.getAccount(address);
    return a && isTokenProgram(a.programAddress) ? decodeMint(new Uint8Array(a.data)) : undefined;
  }

  tokenAccount(address: Address): TokenAccount | undefined {
    const a = this.getAccount(address);
    return a && isTokenProgram(a.programAddress) ? decodeTokenAccount(new Uint8Array(a.data)) : undefined;
  }

  /** Token accounts of an owner, of one mint or of one token program (both token programs when neither is given). */
  tokenAccountsByOwner(
    owner: Address,
    filter: { mint?: Address; programId?: Address } = {},
  ): { account: EncodedAccount; token: TokenAccount }[] {
    const programs = filter.programId
      ? [filter.programId]
      : filter.mint
        ? [this.getAccount(filter.mint)?.programAddress ?? TOKEN_PROGRAM]
        : [TOKEN_PROGRAM, TOKEN_2022_PROGRAM];
    const out: { account: EncodedAccount; token: TokenAccount }[] = [];
    for (const program of programs)
      for (const account of this.svm.getProgramAccounts(program)) {
        const token = decodeTokenAccount(new Uint8Array(account.data));
        if (token && token.owner === owner && (!filter.mint || token.mint === filter.mint)) out.push({ account, token });
      }
    return out;
  }

  minimumBalanceForRentExemption(size: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(size));
  }

  transaction(signature: string): ExecutedTransaction | undefined {
    return this.history.get(signature as Signature);
  }

  signatureStatus(signature: string): SignatureStatus | undefined {
    const tx = this.history.get(signature as Signature);
    if (tx) return { slot: tx.slot, blockTime: tx.blockTime, err: tx.err };
    return this.airdrops.get(signature as Signature);
  }

  /** Signatures of transactions that touched an address, newest first (getSignaturesForAddress). */
  signaturesForAddress(address: Address, opts: { limit?: number; before?: string; until?: string } = {}): SignatureInfo[] {
    const all = [...(this.byAddress.get(address) ?? [])].reverse();
    let start = 0;
    if (opts.before) {
      const i = all.indexOf(opts.before as Signature);
      start = i < 0 ? all.length : i + 1;
    }
    const out: SignatureInfo[] = [];
    for (const signature of all.slice(start)) {
      if (signature === opts.until || out.length >= (opts.limit ?? 1000)) break;
      const tx = this.history.get(signature);
      const info = tx
        ? {
            signature,
            slot: tx.slot,
            blockTime: tx.blockTime,
            err: tx.err,
            memo: tx.memos.length ? tx.memos.map((m) => `[${Buffer.byteLength(m)}] ${m}`).join("; ") : null,
          }
        : this.airdrops.get(signature);
      if (info) out.push(info);
    }
    return out;
  }

  private decode(input: Uint8Array | Transaction): { tx: Transaction; wire: Uint8Array } {
    if (!(input instanceof Uint8Array)) return { tx: input, wire: new Uint8Array(getTransactionEncoder().encode(input)) };
    try {
      return { tx: getTransactionDecoder().decode(input), wire: input };
    } catch (e) {
      throw new InvalidTransaction(`failed to deserialize VersionedTransaction: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** The checks a cluster makes before running a transaction: blockhash age, then the status cache. */
  private precheck(message: CompiledMessage, signature: Signature): SolanaTransactionError | null {
    if (!usesDurableNonce(message) && !this.window.isRecent(message.lifetimeToken)) return "BlockhashNotFound";
    if (signature !== NO_SIGNATURE && (this.history.has(signature) || this.svm.getTransaction(signature))) return "AlreadyProcessed";
    return null;
  }

  private loadedAddresses(message: CompiledMessage): { writable: Address[]; readonly: Address[] } {
    const writable: Address[] = [];
    const readonly: Address[] = [];
    const lookups = "addressTableLookups" in message ? (message.addressTableLookups ?? []) : [];
    for (const l of lookups) {
      const table = this.getAccount(l.lookupTableAddress);
      if (!table) continue; // litesvm refuses it (AddressLookupTableNotFound)
      const data = new Uint8Array(table.data);
      const at = (i: number) =>
        b58.decode(data.subarray(LOOKUP_TABLE_META_SIZE + 32 * i, LOOKUP_TABLE_META_SIZE + 32 * (i + 1))) as Address;
      writable.push(...l.writableIndexes.map(at));
      readonly.push(...l.readonlyIndexes.map(at));
    }
    return { writable, readonly };
  }

  private snapshot(keys: Address[]): { balances: bigint[]; tokens: TokenBalance[] } {
    const balances: bigint[] = [];
    const tokens: TokenBalance[] = [];
    keys.forEach((key, accountIndex) => {
      const a = this.getAccount(key);
      balances.push(a ? a.lamports : 0n);
      if (!a || !isTokenProgram(a.programAddress)) return;
      const t = decodeTokenAccount(new Uint8Array(a.data));
      if (!t) return;
      const decimals = this.mint(t.mint)?.decimals ?? 0;
      tokens.push({
        accountIndex,
        mint: t.mint,
        owner: t.owner,
        programId: a.programAddress,
        uiTokenAmount: uiTokenAmount(t.amount, decimals),
      });
    });
    return { balances, tokens };
  }

  private remember(tx: ExecutedTransaction) {
    this.history.set(tx.signature, tx);
    if (this.history.size > this.historyLimit) {
      const oldest = this.history.keys().next().value!;
      this.history.delete(oldest);
    }
    this.index(tx.signature, tx.accountKeys);
    for (const listener of this.listeners) {
      try {
        listener(tx);
      } catch (e) {
        log.warn({ err: e, signature: tx.signature }, "onTransaction listener failed");
      }
    }
  }

  private index(signature: Signature, addresses: Address[]) {
    for (const a of new Set(addresses)) {
      const list = this.byAddress.get(a) ?? [];
      list.push(signature);
      if (list.length > 10_000) list.shift();
      this.byAddress.set(a, list);
    }
  }

  private setAccount(address: Address, owner: Address, data: Uint8Array) {
    const current = this.getAccount(address);
    const rent = this.minimumBalanceForRentExemption(data.length);
    this.svm.setAccount({
      address,
      data,
      executable: false,
      lamports: lamports(current && current.lamports > rent ? current.lamports : rent),
      programAddress: owner,
      space: BigInt(data.length),
    });
  }
}

/** Slots per epoch on mainnet. */
export const SLOTS_PER_EPOCH = 432_000;

function decodeMessage(tx: Transaction): CompiledMessage {
  let message: CompiledTransactionMessage & CompiledTransactionMessageWithLifetime;
  try {
    message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  } catch (e) {
    throw new InvalidTransaction(`failed to deserialize the message: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (message.version !== "legacy" && message.version !== 0)
    throw new InvalidTransaction(`Transaction version (${message.version}) is unsupported`);
  return message;
}

/** The transaction's id: the fee payer's signature (base58), or 64 zero bytes' when unsigned. */
function signatureOf(tx: Transaction, message: CompiledMessage): Signature {
  const bytes = tx.signatures[message.staticAccounts[0]!];
  return bytes ? (b58.decode(bytes) as Signature) : NO_SIGNATURE;
}

/** A nonce transaction: its first instruction is the System program's AdvanceNonceAccount (index 4). */
function usesDurableNonce(message: CompiledMessage): boolean {
  const first = message.instructions[0];
  if (!first || message.staticAccounts[first.programAddressIndex] !== SYSTEM_PROGRAM) return false;
  const d = first.data;
  return !!d && d.length >= 4 && d[0] === 4 && d[1] === 0 && d[2] === 0 && d[3] === 0;
}

/** 5000 lamports a signature, plus the priority fee (ComputeBudget unit price × limit), as litesvm charges. */
function feeOf(message: CompiledMessage, instructions: DecodedInstruction[]): bigint {
  let price = 0n;
  let limit: bigint | undefined;
  let others = 0n;
  for (const ix of instructions) {
    if (ix.programAddress !== COMPUTE_BUDGET_PROGRAM) {
      others++;
      continue;
    }
    const view = new DataView(ix.data.buffer, ix.data.byteOffset, ix.data.byteLength);
    if (ix.data[0] === 2 && ix.data.length >= 5) limit = BigInt(view.getUint32(1, true));
    if (ix.data[0] === 3 && ix.data.length >= 9) price = view.getBigUint64(1, true);
  }
  const units = limit ?? (others * 200_000n > 1_400_000n ? 1_400_000n : others * 200_000n);
  return LAMPORTS_PER_SIGNATURE * BigInt(message.header.numSignerAccounts) + (price * units + 999_999n) / 1_000_000n;
}

function unitsOf(meta: { computeUnitsConsumed(): bigint }): bigint {
  return meta.computeUnitsConsumed();
}

/**
 * The stack's Solana: a LocalSolana with USDC at Circle's mint address (6 decimals, minted by
 * LOCAL_SOLANA.usdcAuthority) and SOL for the local roles' fees.
 */
export function createLocalSolana(opts: LocalSolanaOptions = {}): LocalSolana {
  const sol = new LocalSolana(opts);
  sol.placeMint(SOLANA.usdc.mint as Address, SOLANA.usdc.decimals, LOCAL_SOLANA.usdcAuthority.address);
  for (const key of Object.values(LOCAL_SOLANA)) sol.airdrop(key.address, 100n * 10n ** 9n);
  return sol;
}
