import type { PoolClient } from "pg";
import {
  BaseError,
  ContractFunctionRevertedError,
  ExecutionRevertedError,
  getAddress,
  keccak256,
  parseTransaction,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type TransactionReceipt,
} from "viem";
import { logger } from "../core/log.js";
import { observeTxAtFeeCap, observeTxMined, observeTxReplacement } from "../core/metrics.js";
import { withTransaction, type Db } from "../db/client.js";
import { initialFees, isStuck, marketOf, pricedOut, replacementFees, type Fees, type Market } from "./fees.js";
import { moneyBlock } from "./money-block.js";
import type { ActiveChain } from "./runtime.js";

/** A transaction as signed and stored before it is broadcast. `from` is lowercase. */
export type SignedTx = { chainId: number; from: string; nonce: number; hash: Hex; rawTx: Hex };

/**
 * What the caller kept of a transaction it sent, enough to find it or send it again. `from`: its signer, when it may
 * be another than the sender's (a key rotated away: its transactions are followed to the end, never replaced).
 */
export type StoredTx = { hash: Hex; rawTx: Hex; nonce: number; from?: string | null };

/**
 * What became of a stored transaction: mined (or reverted) with its receipt; dropped when the node has no
 * receipt and its nonce was used at a final depth (another transaction took it: it can never mine); sent
 * when it still waits (the node has it again, or its nonce was used too recently to tell).
 */
export type TxOutcome = { status: "mined" | "reverted"; receipt: TransactionReceipt } | { status: "dropped" } | { status: "sent" };

/** Test seams: crash the process at the two points a crash can leave a transaction half-recorded. */
export type BroadcastHooks = { beforeBroadcast?: (hash: Hex) => void; afterBroadcast?: (hash: Hex) => void };

export type SendTransactionParameters = {
  to: Address;
  data?: Hex;
  value?: bigint;
  /** Gas limit as is; without it the call is estimated and given a 20% margin. */
  gas?: bigint;
  /**
   * The most gas this operation may cost, from what it should cost (a sweep of a registry token, a transfer):
   * an estimate above it (a hostile token's `transfer` that burns gas) signs nothing and throws GasCapError, and
   * the limit signed never exceeds it. The service pays this gas; an attacker's contract must not set it.
   */
  gasCap?: bigint;
  /** Runs under the signer's lock before a nonce is taken; false sends nothing (another replica got there first). */
  claim?: (client: PoolClient) => Promise<boolean>;
  /** Stores the signed transaction in the caller's table, in the database transaction that takes its nonce. */
  record: (client: PoolClient, tx: SignedTx) => Promise<void>;
  /** The node accepted the bytes (or already had them). */
  sent?: (tx: SignedTx) => Promise<void>;
  hooks?: BroadcastHooks;
};

/** Gas estimation failed because the call reverts as it stands. Nothing was signed. RPC failures are not this. */
export class GasEstimateError extends Error {
  constructor(cause: unknown) {
    super((cause as Error).message, { cause });
    this.name = "GasEstimateError";
  }
}

/** The call would cost more gas than its operation's cap (`gasCap`): nothing was signed. A GasEstimateError, so
 * callers that give up on a call that cannot execute give up on this one too. */
export class GasCapError extends GasEstimateError {
  constructor(
    readonly estimate: bigint,
    readonly cap: bigint,
  ) {
    super(new Error(`gas estimate ${estimate} exceeds this operation's cap of ${cap}`));
    this.name = "GasCapError";
  }
}

export type TxSender = {
  /** The signer's address. */
  address: Address;
  sendTransaction(params: SendTransactionParameters): Promise<SignedTx | null>;
  reconcile<T extends StoredTx>(txs: T[], apply: (tx: T, outcome: TxOutcome) => Promise<void>): Promise<void>;
};

/**
 * The one way the service sends a transaction (settlement sweeps and withdrawals today; Vault sweeps
 * and bridge cancels next). `sendTransaction` takes the nonce under a Postgres advisory lock per
 * (chain, signer), so several replicas never reuse one; signs; lets the caller store the signed bytes
 * and hash in that same database transaction; and broadcasts only after it commits. After a crash at
 * any point, `reconcile` finds each stored transaction by its hash: a receipt means mined or reverted;
 * the node saying it has none, with the nonce used at a final depth (`safeNonce`), means dropped; an RPC
 * error decides nothing (next pass); otherwise the same bytes (same nonce, same hash) are sent again. So a
 * sent transaction is never forgotten, never signed twice, and never taken for dropped while it may mine.
 *
 * @example
 * const sender = txSender({ db, chain, client, account });
 * await sender.sendTransaction({
 *   to: chain.factory!,
 *   data,
 *   record: async (c, tx) => {
 *     await c.query(`INSERT INTO settlements (chain_id, signer, nonce, tx_hash, raw_tx, payment_ids) VALUES ($1, $2, $3, $4, $5, $6)`,
 *       [tx.chainId, tx.from, tx.nonce, tx.hash, tx.rawTx, paymentIds]);
 *   },
 *   sent: async (tx) => {
 *     await db.pool.query(`UPDATE settlements SET status = 'sent' WHERE tx_hash = $1 AND status = 'signed'`, [tx.hash]);
 *   },
 * });
 * // Every pass, and so after a restart: what became of what was stored.
 * await sender.reconcile(live.map((s) => ({ ...s, hash: s.tx_hash, rawTx: s.raw_tx })), async (s, outcome) => {
 *   await db.pool.query(`UPDATE settlements SET status = $2 WHERE id = $1`, [s.id, outcome.status]);
 * });
 */
export type TxSenderOptions = { db: Db; chain: ActiveChain; client: PublicClient; account: LocalAccount };

export function txSender({ db, chain, client, account }: TxSenderOptions): TxSender {
  const signer = account.address.toLowerCase();

  async function takeNonce(c: PoolClient): Promise<number> {
    const { rows } = await c.query(`SELECT next_nonce FROM signer_nonces WHERE chain_id = $1 AND signer = $2`, [chain.chainId, signer]);
    const pending = await client.getTransactionCount({ address: account.address, blockTag: "pending" });
    const nonce = Math.max(pending, rows[0]?.next_nonce ?? 0);
    await c.query(
      `INSERT INTO signer_nonces (chain_id, signer, next_nonce) VALUES ($1, $2, $3)
       ON CONFLICT (chain_id, signer) DO UPDATE SET next_nonce = EXCLUDED.next_nonce, updated_at = now()`,
      [chain.chainId, signer, nonce + 1],
    );
    return nonce;
  }

  async function estimate(to: Address, data?: Hex, value?: bigint): Promise<bigint> {
    // A lagging provider estimates on an older state (a deposit not there yet: the sweep "reverts" and its payments
    // fail): pinned, it fails there and another answers. Fees filled as without a block (the node checks the signer
    // can pay the gas), the nonce left to the node.
    const blockNumber = await moneyBlock(db, client, chain.chainId);
    try {
      return await client.estimateGas({ account, to, data, value, blockNumber, prepare: ["chainId", "fees", "type"] });
    } catch (e) {
      // Only a revert is the call's fault; a timeout, refused connection or 5xx propagates and the pass retries.
      throw isRevert(e) ? new GasEstimateError(e) : e;
    }
  }

  // A legacy chain's nodes refuse type-2 transactions: a type-0 one with the version's gas price (`Fees`).
  const sign: Signer = (fields, fees) =>
    account.signTransaction!(
      chain.fees.type === "legacy"
        ? { ...fields, chainId: chain.chainId, type: "legacy", gasPrice: fees.maxFeePerGas }
        : { ...fields, chainId: chain.chainId, type: "eip1559", ...fees },
    );

  return {
    address: account.address,

    async sendTransaction({ to, data, value, gas, gasCap, claim, record, sent, hooks = {} }) {
      const needed = gas ?? (await estimate(to, data, value));
      if (gasCap !== undefined && needed > gasCap) throw new GasCapError(needed, gasCap);
      // An estimate gets a 20% margin, which alone may cross the cap: the limit signed never does.
      const withMargin = gas ?? (needed * 12n) / 10n;
      const limit = gasCap !== undefined && withMargin > gasCap ? gasCap : withMargin;
      const market = await marketOf(client, chain.fees);
      const fees = initialFees(chain.fees, market);
      const tx = await withTransaction(db, async (c) => {
        await lockSigner(c, chain.chainId, signer);
        if (claim && !(await claim(c))) return null;
        const nonce = await takeNonce(c);
        const rawTx = await sign({ to, data, value, nonce, gas: limit }, fees);
        const signed: SignedTx = { chainId: chain.chainId, from: signer, nonce, hash: keccak256(rawTx), rawTx };
        await storeVersion(c, signed, 0, fees, market.head);
        await record(c, signed);
        return signed;
      });
      if (!tx) return null;
      hooks.beforeBroadcast?.(tx.hash);
      await broadcast(client, tx.rawTx);
      hooks.afterBroadcast?.(tx.hash);
      await sent?.(tx);
      return tx;
    },

    async reconcile(txs, apply) {
      const own = txs.filter((t) => !t.from || t.from.toLowerCase() === signer);
      await reconcileStored({ db, chain, client, address: account.address, sign }, own, apply);
      // A previous settler's transactions (a rotated key): followed with what is stored, without its key.
      for (const from of new Set(txs.filter((t) => !own.includes(t)).map((t) => t.from!.toLowerCase())))
        await reconcileStored(
          { db, chain, client, address: getAddress(from) },
          txs.filter((t) => t.from?.toLowerCase() === from),
          apply,
        );
    },
  };
}

/** The signer's lock on a chain, for the rest of the caller's transaction: one nonce taken or replaced at a time. */
async function lockSigner(c: Pick<PoolClient, "query">, chainId: number, signer: string) {
  await c.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`nonce:${chainId}:${signer}`]);
}

/** The fields of a transaction other than its chain, type and fees. */
type TxFields = { to?: Address | null; data?: Hex; value?: bigint; gas?: bigint; nonce: number };
/** Signs a transaction of the chain's type (FeeRule `type`) with a version's fees. */
type Signer = (fields: TxFields, fees: Fees) => Promise<Hex>;

/**
 * A version of a nonce as stored (tx_versions). A legacy transaction's `gasPrice` is stored in both max_fee_per_gas
 * and max_priority_fee_per_gas (chains/fees.ts `Fees`): no column of its own, the same rules read it.
 */
type Version = Fees & { hash: Hex; rawTx: Hex; version: number; signedBlock: bigint; createdAt: Date };

async function storeVersion(c: Pick<PoolClient, "query">, tx: SignedTx, version: number, fees: Fees, signedBlock: bigint) {
  await c.query(
    `INSERT INTO tx_versions (hash, chain_id, signer, nonce, version, raw_tx, max_fee_per_gas, max_priority_fee_per_gas, signed_block)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (hash) DO NOTHING`,
    [
      tx.hash,
      tx.chainId,
      tx.from,
      tx.nonce,
      version,
      tx.rawTx,
      fees.maxFeePerGas.toString(),
      fees.maxPriorityFeePerGas.toString(),
      signedBlock.toString(),
    ],
  );
}

/**
 * The versions of a stored transaction's nonce, oldest first. A transaction stored before versions were kept (or by a
 * caller's own signer) is its only version, recorded now as signed at `head` (so it is not replaced at first sight).
 */
async function versionsOf(db: Db, chainId: number, signer: string, tx: StoredTx, head: () => Promise<bigint>): Promise<Version[]> {
  const { rows } = await db.pool.query<{
    hash: Hex;
    raw_tx: Hex;
    version: number;
    max_fee_per_gas: string;
    max_priority_fee_per_gas: string;
    signed_block: string;
    created_at: Date;
  }>(
    `SELECT hash, raw_tx, version, max_fee_per_gas, max_priority_fee_per_gas, signed_block, created_at FROM tx_versions
      WHERE chain_id = $1 AND signer = $2 AND nonce = $3 ORDER BY version`,
    [chainId, signer, tx.nonce],
  );
  const versions = rows.map((r) => ({
    hash: r.hash,
    rawTx: r.raw_tx,
    version: r.version,
    maxFeePerGas: BigInt(r.max_fee_per_gas),
    maxPriorityFeePerGas: BigInt(r.max_priority_fee_per_gas),
    signedBlock: BigInt(r.signed_block),
    createdAt: r.created_at,
  }));
  if (versions.some((v) => v.hash === tx.hash)) return versions;
  const fees = feesOf(tx.rawTx);
  const signedBlock = await head();
  await storeVersion(
    db.pool,
    { chainId, from: signer, nonce: tx.nonce, hash: tx.hash, rawTx: tx.rawTx },
    versions.length,
    fees,
    signedBlock,
  );
  return [...versions, { ...fees, hash: tx.hash, rawTx: tx.rawTx, version: versions.length, signedBlock, createdAt: new Date() }];
}

/** The fees signed into a transaction's bytes (0 when they cannot be read: it is then replaced once stuck). */
function feesOf(rawTx: Hex): Fees {
  try {
    const p = parseTransaction(rawTx);
    return { maxFeePerGas: p.maxFeePerGas ?? p.gasPrice ?? 0n, maxPriorityFeePerGas: p.maxPriorityFeePerGas ?? p.gasPrice ?? 0n };
  } catch {
    return { maxFeePerGas: 0n, maxPriorityFeePerGas: 0n };
  }
}

/** Marks every version of a nonce with what became of it (one mined, or all dropped). */
async function resolveVersions(db: Db, chainId: number, signer: string, nonce: number, outcome: string) {
  await db.pool.query(
    `UPDATE tx_versions SET outcome = $4, resolved_at = now() WHERE chain_id = $1 AND signer = $2 AND nonce = $3 AND outcome IS NULL`,
    [chainId, signer, nonce, outcome],
  );
}

/** What reconciling needs: no key. Transactions a signer stored can be followed by a process that cannot sign. */
export type StoredTxContext = {
  db: Db;
  chain: ActiveChain;
  client: PublicClient;
  address: Address;
  /** The signer's key (TxSender.reconcile): a stuck version is signed again with higher fees. Without it, only re-sent. */
  sign?: Signer;
};

/**
 * `TxSender.reconcile`: the outcome of each stored transaction of `address` (see TxOutcome). Any version of its nonce
 * mining is the outcome (exactly one can). While none has, the latest version is sent again; with the key, a version
 * priced under the base fee or waiting the chain's `replaceAfterBlocks` is replaced: the same nonce, to, data, value
 * and gas limit, both fees at least 10% up and following the base fee (a legacy chain: the gas price at least 10% up
 * and at least the node's `eth_gasPrice`), up to the chain's cap (then it waits at the cap, counted in metrics and
 * shown by health). Each version's bytes are stored before they are broadcast. One transaction's refused broadcast is
 * logged and the others go on. Without the key (sanctions returns, signed by the factory owner from the CLI and
 * followed by the settler: modules/sanctions/return-settle.ts) nothing is replaced.
 *
 * @example
 * await reconcileStored({ db, chain, client, address: owner }, rows, async (row, outcome) => record(row, outcome));
 */
export async function reconcileStored<T extends StoredTx>(
  { db, chain, client, address, sign }: StoredTxContext,
  txs: T[],
  apply: (tx: T, outcome: TxOutcome) => Promise<void>,
): Promise<void> {
  if (txs.length === 0) return;
  const signer = address.toLowerCase();
  const log = logger("tx-sender");
  const confirmedNonce = await client.getTransactionCount({ address, blockTag: "latest" });
  let finalNonce: Promise<number> | undefined; // read once, only if some nonce is used without our receipt
  let market: Promise<Market | null> | undefined; // read once, only if some transaction still waits
  const marketNow = () =>
    (market ??= marketOf(client, chain.fees).catch((e) => {
      log.warn({ chainId: chain.chainId, error: firstLine(e) }, "fee market unknown: nothing replaced this pass");
      return null;
    }));
  const head = async () => (await marketNow())?.head ?? (await client.getBlockNumber({ cacheTime: 0 }));
  for (const tx of [...txs].sort((a, b) => a.nonce - b.nonce)) {
    const versions = await versionsOf(db, chain.chainId, signer, tx, head);
    let receipt: TransactionReceipt | null = null;
    let unknown = false;
    for (const v of [...versions].reverse()) {
      try {
        receipt = await client.getTransactionReceipt({ hash: v.hash });
        break;
      } catch (e) {
        // Only the node's "no such receipt" is an answer; any other error says nothing about the transaction.
        if (!isReceiptNotFound(e)) {
          log.warn({ chainId: chain.chainId, txHash: v.hash, error: firstLine(e) }, "receipt unknown, next pass");
          unknown = true;
          break;
        }
      }
    }
    if (unknown) continue;
    if (receipt) {
      await resolveVersions(db, chain.chainId, signer, tx.nonce, receipt.transactionHash.toLowerCase());
      const first = versions[0]!;
      const block = await client.getBlock({ blockHash: receipt.blockHash }).catch(() => null);
      observeTxMined(
        chain.chainId,
        Math.max(0, (Number(block?.timestamp ?? 0n) * 1000 || Date.now()) - first.createdAt.getTime()) / 1000,
        receipt.effectiveGasPrice,
        block?.baseFeePerGas ?? null,
      );
      await apply(tx, { status: receipt.status === "success" ? "mined" : "reverted", receipt });
      continue;
    }
    // Used at a final depth by a transaction that is none of its versions: it can never mine.
    if (tx.nonce < confirmedNonce && tx.nonce < (await (finalNonce ??= safeNonce(chain, client, address)))) {
      await resolveVersions(db, chain.chainId, signer, tx.nonce, "dropped");
      await apply(tx, { status: "dropped" });
      continue;
    }
    // Not mined, or its nonce taken too recently to tell (a reorg may bring it back): the latest version again, or
    // a new one when it is stuck.
    let latest = versions.at(-1)!;
    const now = sign ? await marketNow() : null;
    if (sign && now && isStuck(chain.fees, latest, now)) {
      const fees = replacementFees(chain.fees, latest, now);
      if (fees) latest = (await replace(db, chain, signer, tx.nonce, latest, fees, now.head, sign)) ?? latest;
      // Waited its blocks but the cap leaves no 10% to add: it is still includable, so it just waits its turn. Priced
      // under the base fee (a legacy chain: or the node's gas price), the cap keeps it waiting.
      else if (pricedOut(chain.fees, latest, now)) {
        observeTxAtFeeCap(chain.chainId);
        await db.pool.query(`UPDATE tx_versions SET at_fee_cap = true WHERE hash = $1 AND NOT at_fee_cap`, [latest.hash]);
        log.warn(
          {
            chainId: chain.chainId,
            nonce: tx.nonce,
            maxFeePerGas: latest.maxFeePerGas.toString(),
            baseFee: now.baseFee.toString(),
            gasPrice: now.gasPrice?.toString(),
          },
          "transaction waits at the chain's fee cap (MAX_FEE_PER_GAS_GWEI)",
        );
      }
    }
    try {
      await broadcast(client, latest.rawTx);
    } catch (e) {
      // Refused (priced under the base fee, a full pool): the next pass looks again; the other transactions go on.
      log.warn({ chainId: chain.chainId, nonce: tx.nonce, txHash: latest.hash, error: firstLine(e) }, "broadcast refused, next pass");
      continue;
    }
    await apply(tx, { status: "sent" });
  }
}

/**
 * Signs the next version of a nonce (same fields, new fees) and stores it, under the signer's lock, unless another
 * process replaced `latest` meanwhile (then null: that one is followed next pass).
 */
async function replace(
  db: Db,
  chain: ActiveChain,
  signer: string,
  nonce: number,
  latest: Version,
  fees: Fees,
  head: bigint,
  sign: NonNullable<StoredTxContext["sign"]>,
): Promise<Version | null> {
  return withTransaction(db, async (c) => {
    await lockSigner(c, chain.chainId, signer);
    const { rows } = await c.query<{ hash: string }>(
      `SELECT hash FROM tx_versions WHERE chain_id = $1 AND signer = $2 AND nonce = $3 ORDER BY version DESC LIMIT 1`,
      [chain.chainId, signer, nonce],
    );
    if (rows[0]?.hash !== latest.hash) return null;
    const p = parseTransaction(latest.rawTx);
    const rawTx = await sign({ to: p.to, data: p.data, value: p.value, gas: p.gas, nonce }, fees);
    const hash = keccak256(rawTx);
    await storeVersion(c, { chainId: chain.chainId, from: signer, nonce, hash, rawTx }, latest.version + 1, fees, head);
    observeTxReplacement(chain.chainId);
    logger("tx-sender").info(
      { chainId: chain.chainId, nonce, replaced: latest.hash, txHash: hash, maxFeePerGas: fees.maxFeePerGas.toString() },
      "stuck transaction replaced with higher fees",
    );
    return { ...fees, hash, rawTx, version: latest.version + 1, signedBlock: head, createdAt: new Date() };
  });
}

/**
 * The signer's nonce at a depth the chain will not reorganise: the shallower of the node's `finalized`
 * block and head − the registry's finality blocks (what the indexer treats as final). On Anvil
 * `finalized` is head − 64. 0 (nothing is final) when the node cannot answer.
 */
async function safeNonce(chain: ActiveChain, client: PublicClient, address: Address): Promise<number> {
  try {
    const head = await client.getBlockNumber({ cacheTime: 0 });
    const byDepth = head - BigInt(chain.finalityBlocks);
    const finalized = await client
      .getBlock({ blockTag: "finalized" })
      .then((b) => b.number)
      .catch(() => null); // a node without the tag: depth alone
    const block = finalized !== null && finalized > byDepth ? finalized : byDepth;
    if (block < 0n) return 0;
    return await client.getTransactionCount({ address, blockNumber: block });
  } catch (e) {
    logger("tx-sender").warn({ chainId: chain.chainId, error: firstLine(e) }, "final nonce unknown, nothing taken for dropped");
    return 0;
  }
}

/** Sends signed bytes; a node that already has them (in its pool or mined) is what we want, not an error. */
export async function broadcast(client: PublicClient, rawTx: Hex): Promise<void> {
  try {
    await client.sendRawTransaction({ serializedTransaction: rawTx });
  } catch (e) {
    const msg = (e as Error).message.toLowerCase();
    if (msg.includes("already known") || msg.includes("nonce too low") || msg.includes("already imported")) return;
    throw e;
  }
}

/** The node answered that it has no receipt for the hash (as opposed to not answering). */
export function isReceiptNotFound(e: unknown): boolean {
  return e instanceof TransactionReceiptNotFoundError || (e as Error | null)?.name === "TransactionReceiptNotFoundError";
}

/** The call reverted (viem's estimate/call errors wrap ExecutionRevertedError or ContractFunctionRevertedError). */
export function isRevert(e: unknown): boolean {
  if (!(e instanceof BaseError)) return false;
  return Boolean(e.walk((x) => x instanceof ExecutionRevertedError || x instanceof ContractFunctionRevertedError));
}

const firstLine = (e: unknown) => String((e as Error)?.message ?? e).split("\n")[0];
