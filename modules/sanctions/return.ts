import type pg from "pg";
import { returnGasCap } from "../../chains/gas-caps.js";
import { encodeFunctionData, erc20Abi, getAddress, isAddress, zeroAddress, type Address, type Hex, type LocalAccount } from "viem";
import { walletFactoryAbi } from "../../abis/WalletFactory.js";
import { factorySupportsReturn } from "../../chains/factory-check.js";
import { moneyBlock } from "../../chains/money-block.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { GasEstimateError, txSender, type BroadcastHooks } from "../../chains/tx-sender.js";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { firstLine } from "../../core/log.js";
import { withTransaction } from "../../db/client.js";
import {
  checkDecision,
  lockSubject,
  NOUN,
  openReturn,
  SUBJECT_TABLE,
  subjectOf,
  type Decision,
  type HoldSubject,
  type Target,
} from "./holds.js";
import { settleReturns } from "./return-settle.js";
import { transitionReturn } from "./transition.js";
import { screenAddresses } from "./screen.js";
import { sourcesFor } from "./sources.js";

type Deps = Pick<AppDeps, "db" | "config" | "clients" | "chains" | "now">;
type Client = NonNullable<ReturnType<Deps["clients"]["get"]>>;

/** What `sanctions return` is told beyond the subject: where, how much (smallest units), and whether to send. */
export type ReturnOptions = {
  to: string;
  /** Payments and recoveries only: part of the balance (default: all of it). A vault deposit returns its own amount. */
  amount?: string;
  /** The operator's licence or authorisation reference, required when `to` is itself flagged. */
  licence?: string;
  /** False: a dry run (nothing is stored or signed). */
  confirm: boolean;
  /** How long a confirmed return waits for its receipt before answering (the settler follows it anyway). */
  waitMs?: number;
  hooks?: BroadcastHooks;
};

/** A hold whose funds can be returned, with what the factory needs to reach its wallet. */
type Returnable = {
  hold_id: string;
  hold_status: "held" | "rejected";
  subject: HoldSubject;
  chain_id: number;
  address: string;
  salt: Hex;
  payout: Address;
  wallet: Address;
  token: Address;
  /** A vault deposit's own amount (its address may hold other deposits' funds too); null for a payment or recovery. */
  amount: string | null;
  /** What screening held: a payment's received amount, a recovery's requested one, a deposit's amount. */
  held_units: string;
  /** A vault deposit's block (a payment's or recovery's: null). */
  block_number: string | null;
};

const RETURNABLE = {
  payment: `SELECT h.id AS hold_id, h.status AS hold_status, h.subject, h.chain_id, h.address, p.salt, p.merchant_address AS payout,
                   p.recipient_address AS wallet, p.token_address AS token, NULL::text AS amount,
                   p.received_units::text AS held_units, NULL::text AS block_number
              FROM sanctions_holds h JOIN payments p ON p.id = h.payment_id
             WHERE h.payment_id = $1 AND h.subject = 'payment'`,
  recovery: `SELECT h.id AS hold_id, h.status AS hold_status, h.subject, h.chain_id, h.address, p.salt, p.merchant_address AS payout,
                    p.recipient_address AS wallet, r.token, NULL::text AS amount,
                    r.requested_units::text AS held_units, NULL::text AS block_number
               FROM sanctions_holds h JOIN fund_recoveries r ON r.id = h.recovery_id JOIN payments p ON p.id = r.payment_id
              WHERE h.recovery_id = $1`,
  vault_deposit: `SELECT h.id AS hold_id, h.status AS hold_status, h.subject, h.chain_id, h.address, u.salt, d.payout,
                         d.address AS wallet, d.token_address AS token, d.amount::text AS amount,
                         d.amount::text AS held_units, d.block_number::text AS block_number
                    FROM sanctions_holds h JOIN vault_deposits d ON d.id = h.deposit_id JOIN vault_users u ON u.id = d.vault_user_id
                   WHERE h.deposit_id = $1`,
} as const;

/** The subject's held or rejected hold (the newest), or why there is none. `lock`: FOR UPDATE of the hold. */
async function returnable(db: Pick<pg.PoolClient, "query">, subject: HoldSubject, id: string, lock = false): Promise<Returnable> {
  const { rows } = await db.query<Returnable>(
    `${RETURNABLE[subject]} AND h.status IN ('held', 'rejected') ORDER BY h.created_at DESC LIMIT 1${lock ? " FOR UPDATE OF h" : ""}`,
    [id],
  );
  if (rows[0]) return rows[0];
  const exists = await db.query(`SELECT 1 FROM ${SUBJECT_TABLE[subject]} WHERE id = $1`, [id]);
  if (!exists.rows.length) throw new NotFound(`${NOUN[subject]} not found`);
  const done = await db.query<{ id: string }>(
    `SELECT r.id FROM sanctions_returns r JOIN (${RETURNABLE[subject]}) x ON x.hold_id = r.hold_id WHERE r.status = 'completed' LIMIT 1`,
    [id],
  );
  if (done.rows[0]) throw new Conflict(`${NOUN[subject]} funds were already returned (return ${done.rows[0].id})`);
  throw new Conflict(`${NOUN[subject]} has no held or rejected sanctions hold: nothing to return`);
}

/**
 * `sanctions return`: sends a held (or rejected) subject's funds from its deposit address to `to`, an address the
 * operator names, with the factory owner's key (`WalletFactory.returnFunds`, an exact amount). Nothing here decides
 * where funds go by itself: `to` is never derived from the flagged sender (returning funds to a listed party is
 * usually itself prohibited), it is screened like a sender (flagged: refused unless `licence`; a source that cannot
 * answer: refused whatever SANCTIONS_FAIL_MODE says), and it may not be an address this service watches (the funds
 * would be taken for a deposit), the deposit address or the factory.
 * - Dry run (`confirm: false`): the plan, with the gas estimate; nothing is stored or signed.
 * - Confirmed: one `sanctions_returns` row with the signed bytes, written before broadcast (chains/tx-sender.ts). A
 *   return already in flight for the hold is followed, never signed again (so a re-run after a crash is safe).
 * The settler completes it at the chain's finality depth (return-settle.ts): hold `returned`, audit row, a payment
 * `sanctioned -> cancelled` (`payment.cancelled` with `fundsReturned`), a recovery `failed`, a vault deposit `returned`.
 *
 * @example
 * await returnHeldFunds(deps, owner, { paymentId }, { to: "0x…", confirm: true }, { actor: "ops@host", reason: "OFAC licence 12" });
 */
export async function returnHeldFunds(deps: Deps, owner: LocalAccount, target: Target, opts: ReturnOptions, decision: Decision) {
  const d = checkDecision(decision);
  const { subject, id } = subjectOf(target);
  if (!isAddress(opts.to ?? "", { strict: false })) throw new Invalid("--to must be an address (0x followed by 40 hex digits)");
  const to = getAddress(opts.to);
  const licence = opts.licence?.trim() || null;
  const r = await returnable(deps.db.pool, subject, id);
  const chain = deps.chains.find((c) => c.chainId === r.chain_id);
  const client = deps.clients.get(r.chain_id);
  if (!chain?.factory || !client) throw new Conflict(`chain ${r.chain_id} is not served by this configuration`);
  const wallet = getAddress(r.wallet);
  const token = getAddress(r.token);
  // A return in flight (a re-run after a crash or a timeout) is followed as it is: never screened or signed again.
  const inFlight = await openReturn(deps.db.pool, r.hold_id);
  if (inFlight) {
    const base = { holdId: r.hold_id, subject, subjectId: id, chainId: r.chain_id, inFlight: true };
    if (!opts.confirm)
      return { dryRun: true, ...base, returnId: inFlight.id, status: inFlight.status, next: "run with --yes to follow it" };
    return { ...base, ...(await follow(deps, chain, inFlight.id, opts.waitMs ?? 120_000)) };
  }

  await checkOwner(chain, client, owner);
  await checkWallet(chain, client, r, wallet);
  await checkDestination(deps, chain, client, wallet, to);
  const sources = sourcesFor(deps, chain).map((x) => x.name);
  if (!sources.length && !licence)
    throw new Conflict(
      `no sanctions source is configured for chain ${chain.chainId}, so ${to} cannot be screened: give --licence <reference> to return anyway`,
    );
  const screening = (await screenAddresses(deps, chain, [to])).get(to.toLowerCase())!;
  if (screening.status === "sanctioned" && !licence)
    throw new Conflict(`${to} is flagged by ${screening.source}: returning funds to it needs --licence <reference>`);
  if (screening.status === "unavailable") throw new Conflict(`${to} could not be screened (${screening.reason}): try again`);
  // The balance (what is returned) is read at this block: a lagging provider answers "latest" with an older state (funds
  // not there yet, returned short): pinned, it fails there and another answers.
  const at = await moneyBlock(deps.db, client, chain.chainId);
  if (r.block_number !== null) {
    // A vault address also holds clean deposits: a deposit a re-org could still take away must not be returned from them.
    const depth = at - BigInt(r.block_number) + 1n;
    if (depth < BigInt(chain.finalityBlocks))
      throw new Conflict(`the deposit is ${depth} of ${chain.finalityBlocks} blocks deep: it can be returned once final`);
  }

  const balance =
    token === zeroAddress
      ? await client.getBalance({ address: wallet, blockNumber: at })
      : await client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [wallet], blockNumber: at });
  const amount = returnAmount(r, opts.amount, balance);
  const call = {
    to: chain.factory,
    data: encodeFunctionData({ abi: walletFactoryAbi, functionName: "returnFunds", args: [r.salt, r.payout, token, to, amount] }),
  };
  const plan = {
    holdId: r.hold_id,
    holdStatus: r.hold_status,
    subject,
    subjectId: id,
    chainId: r.chain_id,
    sanctionedAddress: getAddress(r.address),
    wallet,
    token,
    amountUnits: amount.toString(),
    balanceUnits: balance.toString(),
    to,
    toScreening:
      screening.status === "sanctioned"
        ? { status: "sanctioned", source: screening.source, sources, licence }
        : { status: screening.status, sources, licence },
    heldUnits: r.held_units,
    signer: owner.address,
  };

  if (!opts.confirm) {
    let gasEstimate: string;
    try {
      gasEstimate = (await client.estimateGas({ account: owner, ...call })).toString();
    } catch (e) {
      throw new Conflict(`the return would revert: ${firstLine(e)}`);
    }
    return { dryRun: true, ...plan, gasEstimate, next: "run again with --yes to sign and send it" };
  }

  let returnId: string | null = null;
  {
    const sender = txSender({ db: deps.db, chain, client, account: owner });
    try {
      const tx = await sender.sendTransaction({
        ...call,
        gasCap: returnGasCap(deps.config.SWEEP_GAS_CAP_PER_WALLET),
        hooks: opts.hooks,
        // Under the subject's row lock (as release and reject take it): still held or rejected, nothing in flight.
        claim: async (c) => {
          await lockSubject(c, subject, id);
          const cur = await returnable(c, subject, id, true);
          return cur.hold_id === r.hold_id && !(await openReturn(c, r.hold_id));
        },
        record: async (c, tx) => {
          const { rows } = await c.query<{ id: string }>(
            `INSERT INTO sanctions_returns (hold_id, chain_id, wallet, token, to_address, amount_units, licence, actor, reason,
               status, signer, nonce, tx_hash, raw_tx, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'signed', $10, $11, $12, $13, $14, $14) RETURNING id`,
            [
              r.hold_id,
              r.chain_id,
              wallet.toLowerCase(),
              token.toLowerCase(),
              to.toLowerCase(),
              amount.toString(),
              licence,
              d.actor,
              d.reason,
              tx.from,
              tx.nonce,
              tx.hash,
              tx.rawTx,
              new Date(deps.now()),
            ],
          );
          returnId = rows[0]!.id;
        },
        // `returnId` is the row `record` stored this transaction in (committed before it was broadcast).
        sent: async () => {
          await withTransaction(deps.db, (c) => transitionReturn(c, returnId!, { from: ["signed"], to: "sent", now: deps.now() }));
        },
      });
      if (!tx) throw new Conflict("the hold changed meanwhile (decided, or a return started): look at `sanctions list`");
    } catch (e) {
      if (e instanceof GasEstimateError) throw new Conflict(`the return would revert, nothing was signed: ${firstLine(e)}`);
      // Stored but not broadcast (or not confirmed sent): the settler sends the same bytes; a re-run follows them.
      if (returnId)
        throw new Error(
          `return ${returnId} is stored but was not broadcast (${firstLine(e)}): the settler sends it; run again to follow it`,
          { cause: e },
        );
      throw e;
    }
  }
  return { ...plan, ...(await follow(deps, chain, returnId!, opts.waitMs ?? 120_000)) };
}

/** The part of the balance to return: a vault deposit's own amount, else `--amount` or the whole balance. */
function returnAmount(r: Returnable, given: string | undefined, balance: bigint): bigint {
  let amount: bigint;
  if (r.amount !== null) {
    if (given !== undefined) throw new Invalid("--amount is not taken for a vault deposit: its own amount is returned");
    amount = BigInt(r.amount);
  } else if (given !== undefined) {
    if (!/^[1-9]\d{0,77}$/.test(given.trim())) throw new Invalid("--amount must be a positive whole number of smallest units");
    amount = BigInt(given.trim());
  } else {
    // By default what screening held, no more: funds that came later are returned only when the operator says so.
    const held = BigInt(r.held_units);
    amount = held > 0n && held < balance ? held : balance;
  }
  if (amount === 0n) throw new Conflict("nothing to return: the deposit address holds none of this token");
  if (amount > balance) throw new Conflict(`the deposit address holds ${balance} units, less than the ${amount} to return`);
  return amount;
}

/** The signing key must be the factory's owner, and the owner no settler (the service's key must not be able to return). */
async function checkOwner(chain: ActiveChain, client: Client, owner: LocalAccount) {
  const factory = chain.factory!;
  if (!(await factorySupportsReturn(client, factory)))
    throw new Conflict(`the factory on chain ${chain.chainId} (${factory}) predates returnFunds: it cannot return funds`);
  const actual = await client.readContract({ address: factory, abi: walletFactoryAbi, functionName: "owner" });
  if (getAddress(actual) !== getAddress(owner.address))
    throw new Invalid(`the key given (${owner.address}) is not the factory owner (${actual}): set FACTORY_OWNER_PRIVATE_KEY`);
  if (await client.readContract({ address: factory, abi: walletFactoryAbi, functionName: "isSettler", args: [owner.address] }))
    throw new Conflict(`the factory owner ${owner.address} is also a settler: give the owner its own key first`);
}

/** The deposit address must be this chain's factory's wallet of (salt, payout): only then can the factory move its funds. */
async function checkWallet(chain: ActiveChain, client: Client, r: Returnable, wallet: Address) {
  const computed = await client.readContract({
    address: chain.factory!,
    abi: walletFactoryAbi,
    functionName: "computeAddress",
    args: [r.salt, r.payout],
  });
  if (getAddress(computed) !== wallet)
    throw new Conflict(
      `the deposit address ${wallet} is not a wallet of chain ${chain.chainId}'s factory (${chain.factory}): it cannot return its funds`,
    );
}

/** Where funds may not be returned to: nowhere, back where they are, our contracts, or any address this service watches. */
async function checkDestination(deps: Deps, chain: ActiveChain, client: Client, wallet: Address, to: Address) {
  if (to === zeroAddress) throw new Invalid("--to may not be the zero address");
  if (to === wallet) throw new Invalid("--to is the deposit address itself");
  if (to === getAddress(chain.factory!)) throw new Invalid("--to is the wallet factory");
  const implementation = await client.readContract({ address: chain.factory!, abi: walletFactoryAbi, functionName: "implementation" });
  if (to === getAddress(implementation)) throw new Invalid("--to is the wallets' implementation contract");
  const { rows } = await deps.db.pool.query(`SELECT kind FROM watched_addresses WHERE chain_id = $1 AND address = $2`, [
    chain.chainId,
    to.toLowerCase(),
  ]);
  if (rows[0])
    throw new Invalid(`--to is an address this service watches (${rows[0].kind}): funds sent there would be taken for a deposit`);
}

/** Follows a return until its receipt (at most `waitMs` of wall time), through the settler's own step; its state then. */
async function follow(deps: Deps, chain: ActiveChain, returnId: string, waitMs: number) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    await settleReturns(deps, chain);
    const { rows } = await deps.db.pool.query(
      `SELECT r.status, r.tx_hash, r.block_number::text, r.error, h.status AS hold_status FROM sanctions_returns r
         JOIN sanctions_holds h ON h.id = r.hold_id WHERE r.id = $1`,
      [returnId],
    );
    const row = rows[0];
    if (row.status !== "signed" && row.status !== "sent") {
      const client = deps.clients.get(chain.chainId)!;
      const head = await client.getBlockNumber({ cacheTime: 0 });
      const receipt = row.status === "mined" ? await client.getTransactionReceipt({ hash: row.tx_hash }).catch(() => null) : null;
      const depth = row.block_number === null ? 0n : head - BigInt(row.block_number) + 1n;
      return {
        returnId,
        status: row.status as string,
        txHash: row.tx_hash as Hex,
        blockNumber: row.block_number as string | null,
        confirmations: `${depth < 0n ? 0n : depth}/${chain.finalityBlocks}`,
        holdStatus: row.hold_status as string,
        error: row.error as string | null,
        next:
          row.status === "completed"
            ? "done"
            : receipt?.status === "reverted"
              ? `the transaction reverted: it is recorded reverted once ${chain.finalityBlocks} blocks deep (nothing moved); then run the return again`
              : row.status === "mined"
                ? `the settler completes it once ${chain.finalityBlocks} blocks deep and indexed`
                : "nothing moved: the hold is as it was (see error)",
      };
    }
    if (Date.now() > deadline)
      return {
        returnId,
        status: row.status as string,
        txHash: row.tx_hash as Hex,
        holdStatus: row.hold_status as string,
        next: "not mined yet: the settler follows it (run again with --yes to look)",
      };
    await new Promise((r) => setTimeout(r, 1_000));
  }
}
