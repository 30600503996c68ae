import { and, eq } from "drizzle-orm";
import type pg from "pg";
import { getAddress, type Hex } from "viem";
import { encodeSweep, type SweepRequest } from "../../chains/factory-calls.js";
import type { AppDeps } from "../../core/deps.js";
import { firstLine, logger } from "../../core/log.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { sweepGasCap } from "../../chains/gas-caps.js";
import { GasCapError, GasEstimateError, type BroadcastHooks, type TxSender } from "../../chains/tx-sender.js";
import { withTransaction } from "../../db/client.js";
import { erc20Abi } from "../../abis/erc20.js";
import { confirmedTip, depositFee, isBelowMinimum, readVaultDepositCursor, vaultConfirmations } from "./detect-deposits.js";
import { retryDelayMs } from "./deposits.js";
import type { DepositRow } from "./serialize-deposit.js";
import type { VaultScreening } from "./screening.js";
import { transitionDeposit, transitionSweep } from "./transition.js";
import { debitVaultSweepFee, gasTankBalance, refundVaultSweepFee } from "../gas-tank/index.js";
import { usdt } from "../gas-tank/index.js";
import { customSweepCharge, paysOwnGas } from "./sweep-charge.js";

// The Vault sweeper, one pass per chain: reconcile sweep transactions already signed, complete the ones whose Swept
// events are indexed, then sweep what is waiting. A sweep is the factory's deployAndSweep(salt, payout = the wallet
// the address commits to, token, fee, feeRecipient): it deploys the address's wallet only if it has no code yet and
// moves the wallet's WHOLE balance of the token, so one sweep covers every open deposit of that (address, token).

/** (address, token) groups swept per transaction (deployAndSweepBatch); a batch that cannot execute is split. */
const GROUPS_PER_TX = 20;

type Group = { address: string; token: string };
type Covered = DepositRow & { salt: string; fee_bps: number; fee_recipient: string | null };
/** `charge`: a token outside the registry, swept alone at the merchant's cost: its Gas Tank debit in micros (sweep-charge.ts). */
type Planned = { group: Group; deposits: Covered[]; fees: Map<string, bigint>; request: SweepRequest; charge?: bigint };

/** Why a failed deposit of a token outside the registry waits: its own code failed the sweep, a retry would too. */
const NOT_RETRIED = "a token outside the registry is not retried until another deposit of it";

/** A deposit that asks for a sweep by itself: an enabled token above the minimum, or a held one the business asked to recover. */
const isTrigger = (d: Pick<DepositRow, "hold" | "recover_requested_at">) => d.hold === null || d.recover_requested_at !== null;
/** The same in SQL: the predicate of the partial index `vault_deposits_trigger_idx` (schema.ts). */
const TRIGGER = `d.status IN ('detected', 'failed') AND (d.hold IS NULL OR d.recover_requested_at IS NOT NULL)`;

export async function sweepVaultChain(
  deps: AppDeps,
  chain: ActiveChain,
  sender: TxSender,
  screening: VaultScreening,
  hooks: BroadcastHooks = {},
): Promise<void> {
  if (!chain.factory) return;
  const { rows } = await deps.db.pool.query<{ status: string }>(
    `SELECT DISTINCT status FROM vault_sweeps WHERE chain_id = $1 AND status IN ('signed', 'sent', 'mined')`,
    [chain.chainId],
  );
  const open = new Set(rows.map((r) => r.status));
  if (open.has("signed") || open.has("sent")) await reconcileSweeps(deps, chain, sender);
  if (open.size) await completeSweeps(deps, chain);
  await sendSweeps(deps, chain, sender, screening, hooks);
}

/**
 * The deposits of a sweep that did not happen go back: the ones that asked for it fail (retried after a backoff,
 * one `deposit.failed` webhook per deposit; with `retry: false` not retried until another deposit of the group asks
 * for a sweep), the held ones it would have carried wait again as `detected`.
 */
async function failDeposits(client: pg.PoolClient, deposits: DepositRow[], reason: string, now: number, retry = true) {
  for (const d of deposits) {
    if (isTrigger(d)) {
      const attempts = d.attempts + 1;
      await transitionDeposit(client, d.id, {
        from: ["detected", "processing", "failed"],
        to: "failed",
        reason,
        now,
        set: { attempts, next_attempt_at: retry ? new Date(now + retryDelayMs(attempts)) : null, last_error: reason },
        event: "deposit.failed",
      });
    } else await transitionDeposit(client, d.id, { from: ["processing"], to: "detected", reason, now });
  }
}

async function depositsOfSweep(client: pg.PoolClient, sweepId: string): Promise<DepositRow[]> {
  const { rows } = await client.query<DepositRow>(
    `SELECT d.*, u.external_user_id FROM vault_deposits d JOIN vault_users u ON u.id = d.vault_user_id
      WHERE d.sweep_id = $1 AND d.status = 'processing' ORDER BY d.id FOR UPDATE OF d`,
    [sweepId],
  );
  return rows;
}

/** Signed or sent: mined -> `mined` (completion waits for the index); reverted -> deposits fail; dropped -> swept again. */
async function reconcileSweeps(deps: AppDeps, chain: ActiveChain, sender: TxSender) {
  const { rows } = await deps.db.pool.query<{ id: string; status: string; tx_hash: Hex; raw_tx: Hex; nonce: number; signer: string }>(
    `SELECT id, status, tx_hash, raw_tx, nonce, signer FROM vault_sweeps WHERE chain_id = $1 AND status IN ('signed', 'sent') ORDER BY nonce`,
    [chain.chainId],
  );
  // Every signer's: a settler key rotated away leaves its sweeps to be followed to the end (sender.reconcile).
  const txs = rows.map((r) => ({ ...r, hash: r.tx_hash, rawTx: r.raw_tx, from: r.signer }));
  await sender.reconcile(txs, async (s, outcome) => {
    await withTransaction(deps.db, async (client) => {
      const cur = await client.query(`SELECT 1 FROM vault_sweeps WHERE id = $1 AND status IN ('signed', 'sent') FOR UPDATE`, [s.id]);
      if (!cur.rowCount) return; // another replica reconciled it
      const now = deps.now();
      if (outcome.status === "mined" || outcome.status === "reverted") {
        const { receipt } = outcome;
        await transitionSweep(client, s.id, {
          from: ["signed", "sent"],
          to: outcome.status,
          reason: `${outcome.status} in block ${receipt.blockNumber}`,
          set: {
            gasUsed: receipt.gasUsed.toString(),
            effectiveGasPrice: receipt.effectiveGasPrice.toString(),
            blockNumber: receipt.blockNumber.toString(),
            txHash: receipt.transactionHash,
            ...(outcome.status === "reverted" && { error: "transaction reverted" }),
          },
          now,
        });
        if (outcome.status === "reverted") {
          const ds = await depositsOfSweep(client, s.id);
          // A custom token's sweep swept alone: its own code reverted it (at the cap, paid from the tank); not retried by itself.
          const custom = ds.length > 0 && paysOwnGas(chain, ds[0]!.token_address);
          const reason = `sweep transaction ${s.tx_hash} reverted${custom ? `; ${NOT_RETRIED}` : ""}`;
          await failDeposits(client, ds, reason, now, !custom);
        }
      } else if (outcome.status === "dropped") {
        // Its nonce went to another transaction: it can never mine. Its deposits wait for the next sweep, not failed;
        // a custom token's Gas Tank charge is given back (no gas was spent; the next sweep is charged again).
        await transitionSweep(client, s.id, {
          from: ["signed", "sent"],
          to: "dropped",
          reason: `transaction ${s.tx_hash} dropped: its nonce was used by another`,
          now,
        });
        await refundVaultSweepFee(client, s.id);
        for (const d of await depositsOfSweep(client, s.id))
          await transitionDeposit(client, d.id, {
            from: ["processing"],
            to: d.attempts > 0 ? "failed" : "detected",
            reason: `sweep transaction ${s.tx_hash} dropped`,
            now,
            set: d.attempts > 0 ? { next_attempt_at: new Date(now) } : {},
          });
      } else if (s.status === "signed")
        await transitionSweep(client, s.id, { from: ["signed"], to: "sent", reason: "broadcast (reconciled)", now });
    });
  });
}

/**
 * Mined -> completed, one (address, token) group at a time, once its Swept event is indexed and VAULT_CONFIRMATIONS
 * deep, and deposit detection has recorded every transfer up to that block (the same depth). The deposits completed are every open deposit of the
 * group that precedes the Swept log: the planned ones (their planned fee) and any that arrived after the sweep
 * was signed but before it ran (it moved them too, with no fee charged for them). The event must show the planned
 * fee; a different total (tokens that reached the address before it was watched on that chain) is noted on the
 * sweep for the operator.
 */
async function completeSweeps(deps: AppDeps, chain: ActiveChain) {
  const { rows: mined } = await deps.db.pool.query<{ id: string; tx_hash: Hex }>(
    `SELECT id, tx_hash FROM vault_sweeps WHERE chain_id = $1 AND status = 'mined' ORDER BY block_number, id`,
    [chain.chainId],
  );
  if (!mined.length) return;
  const cursor = await readVaultDepositCursor(deps, chain.chainId);
  const tip = cursor ? confirmedTip(cursor.latest, vaultConfirmations(deps, chain)) : -1n;
  const w = deps.db.views.sweep;
  for (const s of mined) {
    const { rows: groups } = await deps.db.pool.query<Group>(
      `SELECT DISTINCT address, token_address AS token FROM vault_deposits WHERE sweep_id = $1 AND status = 'processing'`,
      [s.id],
    );
    const notes: string[] = [];
    for (const g of groups) {
      const [ev] = await deps.db.orm
        .select()
        .from(w)
        .where(
          and(eq(w.chainId, chain.chainId), eq(w.transactionHash, s.tx_hash), eq(w.wallet, g.address as Hex), eq(w.token, g.token as Hex)),
        )
        .limit(1);
      if (!ev || tip < ev.blockNumber) continue;
      const note = await withTransaction(deps.db, async (client) => {
        const { rows: covered } = await client.query<DepositRow>(
          `SELECT d.*, u.external_user_id FROM vault_deposits d JOIN vault_users u ON u.id = d.vault_user_id
            WHERE d.chain_id = $1 AND d.address = $2 AND d.token_address = $3 AND d.status IN ('processing', 'detected', 'failed')
              AND (d.block_number < $4 OR (d.block_number = $4 AND d.log_index < $5))
            ORDER BY d.block_number, d.log_index FOR UPDATE OF d`,
          [chain.chainId, g.address, g.token, ev.blockNumber.toString(), ev.logIndex],
        );
        const planned = (d: DepositRow) => d.sweep_id === s.id && d.status === "processing";
        const fee = covered.filter(planned).reduce((a, d) => a + BigInt(d.fee), 0n);
        if (fee !== ev.fee) return `${g.address}/${g.token}: Swept fee ${ev.fee} differs from the planned ${fee}; not completed`;
        const now = deps.now();
        for (const d of covered) {
          const f = planned(d) ? BigInt(d.fee) : 0n;
          await transitionDeposit(client, d.id, {
            from: ["processing", "detected", "failed"],
            to: "completed",
            reason: planned(d) ? "swept" : "swept with a later deposit's sweep",
            now,
            set: {
              fee: f.toString(),
              net_amount: (BigInt(d.amount) - f).toString(),
              sweep_id: s.id,
              process_tx_hash: s.tx_hash,
              processed_at: new Date(Number(ev.timestamp) * 1000),
              next_attempt_at: null,
              last_error: null,
            },
            event: "deposit.completed",
          });
        }
        const total = covered.reduce((a, d) => a + BigInt(d.amount), 0n);
        return total === ev.amount + ev.fee ? null : `${g.address}/${g.token}: swept ${ev.amount + ev.fee}, deposits recorded ${total}`;
      });
      if (note) notes.push(note);
    }
    if (notes.length)
      logger("vault-sweeper").error({ chainId: chain.chainId, txHash: s.tx_hash, notes }, "sweep differs from the recorded deposits");
    // Completed once none of its deposits is still processing; the notes are kept either way.
    await withTransaction(deps.db, async (client) => {
      const note = notes.length ? notes.join("; ") : null;
      const open = await client.query(`SELECT 1 FROM vault_deposits WHERE sweep_id = $1 AND status = 'processing' LIMIT 1`, [s.id]);
      if (!open.rowCount)
        await transitionSweep(client, s.id, {
          from: ["mined"],
          to: "completed",
          reason: "Swept events indexed, deposits completed",
          set: note ? { error: note } : {},
          now: deps.now(),
        });
      else if (note)
        await client.query(`UPDATE vault_sweeps SET error = $2, updated_at = now() WHERE id = $1 AND status = 'mined'`, [s.id, note]);
    });
  }
}

/**
 * Groups ready to sweep: some deposit asks for it (an enabled token above the minimum, detected; a failed one whose
 * backoff is over; a held one to recover), none of the group is in flight, none is still backing off, and none is
 * `held` by sanctions screening (the sweep would move its funds too). Read from
 * the deposits that ask (a partial index), so held deposits that never will (dust) cost nothing here.
 */
async function readyGroups(deps: AppDeps, chain: ActiveChain): Promise<Group[]> {
  const { rows } = await deps.db.pool.query<Group>(
    `SELECT d.address, d.token_address AS token FROM vault_deposits d
      WHERE d.chain_id = $1 AND ${TRIGGER} AND (d.status = 'detected' OR d.next_attempt_at <= $2)
        AND NOT EXISTS (SELECT 1 FROM vault_deposits p
                         WHERE p.chain_id = d.chain_id AND p.address = d.address AND p.token_address = d.token_address
                           AND (p.status IN ('processing', 'held') OR (p.status = 'failed' AND p.next_attempt_at > $2)))
      GROUP BY d.address, d.token_address
      ORDER BY min(d.created_at) LIMIT $3`,
    [chain.chainId, new Date(deps.now()), GROUPS_PER_TX],
  );
  return rows;
}

const openDeposits = (deps: AppDeps, chainId: number, g: Group) =>
  deps.db.pool.query<Covered>(
    `SELECT d.*, u.external_user_id, u.salt, v.fee_bps, v.fee_recipient
       FROM vault_deposits d JOIN vault_users u ON u.id = d.vault_user_id JOIN vault_configs v ON v.id = d.vault_id
      WHERE d.chain_id = $1 AND d.address = $2 AND d.token_address = $3 AND d.status IN ('detected', 'failed')
      ORDER BY d.block_number, d.log_index`,
    [chainId, g.address, g.token],
  );

/**
 * Nothing is swept unexplained: the address's balance of the token at the confirmed tip (every transfer up to it is
 * recorded) is compared with the open deposits up to that block, and an excess (tokens that arrived while the
 * address was not watched on this chain: before its first POST /users, or a transfer the indexer skipped) is
 * recorded as a deposit of its own (transfer id `balance:…`, no transaction hash), classified and charged like
 * any other. False when the balance cannot be read (the group waits for the next pass).
 */
async function recordExcess(deps: AppDeps, chain: ActiveChain, g: Group): Promise<boolean> {
  // The cursor first: every transfer up to its confirmed tip is recorded before the deposits are read.
  const cursor = await readVaultDepositCursor(deps, chain.chainId);
  const client = deps.clients.get(chain.chainId);
  if (!cursor || !client) return false;
  const tip = confirmedTip(cursor.latest, vaultConfirmations(deps, chain));
  if (tip < 0n) return false;
  let balance: bigint;
  try {
    balance = await client.readContract({
      address: getAddress(g.token),
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [getAddress(g.address)],
      blockNumber: tip,
    });
  } catch (e) {
    logger("vault-sweeper").warn(
      { chainId: chain.chainId, token: g.token, address: g.address, block: tip.toString(), error: firstLine(e) },
      "balanceOf failed",
    );
    return false;
  }
  const open = (await openDeposits(deps, chain.chainId, g)).rows;
  if (!open[0]) return false;
  const recorded = open.filter((d) => BigInt(d.block_number) <= tip).reduce((a, d) => a + BigInt(d.amount), 0n);
  const excess = balance - recorded;
  if (excess < 0n) {
    // Less than recorded: a deposit's transfer was rolled back; deposit detection voids it, the group waits until then.
    logger("vault-sweeper").error(
      { chainId: chain.chainId, address: g.address, token: g.token, balance: balance.toString(), recorded: recorded.toString() },
      "balance below the recorded deposits; not swept",
    );
    return false;
  }
  if (excess === 0n) return true;
  const first = open[0]!;
  const { rows: enabled } = await deps.db.pool.query<{ token_symbol: string; decimals: number }>(
    `SELECT token_symbol, decimals FROM vault_tokens WHERE vault_id = $1 AND chain_id = $2 AND token_address = $3`,
    [first.vault_id, chain.chainId, g.token],
  );
  const t = enabled[0];
  const hold = !t ? "token_not_enabled" : isBelowMinimum(excess, t.decimals) ? "below_minimum" : null;
  const fee = hold === null ? depositFee(excess, first.fee_bps) : 0n;
  const now = new Date(deps.now());
  await withTransaction(deps.db, async (c) => {
    const { rows } = await c.query<{ id: string }>(
      `INSERT INTO vault_deposits (vault_id, merchant_id, vault_user_id, chain_id, address, payout, token_address, token_symbol,
         token_decimals, amount, fee, net_amount, hold, transfer_id, deposit_tx_hash, block_number, log_index, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, NULL, $15, 2147483647, $16, $16)
       ON CONFLICT (transfer_id) DO NOTHING RETURNING id`,
      [
        first.vault_id,
        first.merchant_id,
        first.vault_user_id,
        chain.chainId,
        g.address,
        first.payout,
        g.token,
        t?.token_symbol ?? first.token_symbol,
        t?.decimals ?? first.token_decimals,
        excess.toString(),
        fee.toString(),
        (excess - fee).toString(),
        hold,
        `balance:${chain.chainId}:${g.address}:${g.token}:${tip}`,
        tip.toString(),
        now,
      ],
    );
    if (rows[0])
      await c.query(
        `INSERT INTO vault_deposit_events (deposit_id, from_status, to_status, reason, data, created_at) VALUES ($1, NULL, 'detected', $2, $3, $4)`,
        [
          rows[0].id,
          "balance above the recorded deposits",
          JSON.stringify({ balance: balance.toString(), recorded: recorded.toString(), block: tip.toString() }),
          now,
        ],
      );
  });
  logger("vault-sweeper").warn(
    { chainId: chain.chainId, address: g.address, token: g.token, excess: excess.toString() },
    "balance above the recorded deposits, recorded as a deposit",
  );
  return true;
}

/** The group's open deposits (an unexplained balance recorded first) and what the sweep asks of the factory: the fee of each deposit, summed. */
async function plan(deps: AppDeps, chain: ActiveChain, sender: TxSender, g: Group): Promise<Planned | null> {
  if (!(await recordExcess(deps, chain, g))) return null;
  const { rows } = await openDeposits(deps, chain.chainId, g);
  const first = rows[0];
  if (!first) return null;
  // Every deposit a sweep moves pays the vault's rate, a recovery of held deposits included: holding a token
  // (removing it from the vault) is no way around the fee.
  const fees = new Map(rows.map((d) => [d.id, depositFee(BigInt(d.amount), first.fee_bps)]));
  const fee = [...fees.values()].reduce((a, b) => a + b, 0n);
  const feeRecipient = getAddress(first.fee_recipient ?? deps.config.FEE_RECIPIENT ?? sender.address);
  return {
    group: g,
    deposits: rows,
    fees,
    request: { salt: first.salt as Hex, payout: getAddress(first.payout), token: getAddress(g.token), fee, feeRecipient },
  };
}

async function sendSweeps(deps: AppDeps, chain: ActiveChain, sender: TxSender, screening: VaultScreening, hooks: BroadcastHooks) {
  // Sanctions screening of every sender the sweep would move (modules/sanctions/vault.ts): flagged deposits are held.
  const groups = await screening.admit(deps, chain, await readyGroups(deps, chain));
  const plans: Planned[] = [];
  let charge: Promise<bigint> | undefined; // the same for every custom group of the pass
  for (const g of groups) {
    const p = await plan(deps, chain, sender, g);
    if (!p) continue;
    if (!paysOwnGas(chain, g.token)) {
      plans.push(p);
      continue;
    }
    // A token outside the registry: swept alone (its cap is its own, not the batch's) and only if the merchant pays.
    p.charge = await (charge ??= customSweepCharge(deps, chain));
    if (await tankCovers(deps, p)) await sweepOrFail(deps, chain, sender, [p], hooks);
  }
  if (plans.length) await sweepOrFail(deps, chain, sender, plans, hooks);
}

const tankShort = (charge: bigint, balance: bigint) =>
  `Gas Tank balance insufficient: the sweep of a token outside the registry is paid from the Gas Tank ` +
  `(${usdt(charge)} USDT, balance ${usdt(balance)} USDT)`;

/** Before anything is estimated: a custom-token group whose merchant's Gas Tank cannot pay fails (retried after a backoff). */
async function tankCovers(deps: AppDeps, p: Planned): Promise<boolean> {
  const balance = await gasTankBalance(deps.db.pool, p.deposits[0]!.merchant_id);
  if (balance >= p.charge!) return true;
  await failGroup(deps, p, tankShort(p.charge!, balance), true);
  return false;
}

/** The group's deposits that asked for the sweep fail with `reason` (held ones it would have carried stay detected). */
async function failGroup(deps: AppDeps, p: Planned, reason: string, retry: boolean) {
  await withTransaction(deps.db, async (client) => {
    const { rows } = await client.query<DepositRow>(
      `SELECT d.*, u.external_user_id FROM vault_deposits d JOIN vault_users u ON u.id = d.vault_user_id
        WHERE d.id = ANY($1) AND d.status IN ('detected', 'failed') ORDER BY d.id FOR UPDATE OF d`,
      [p.deposits.map((d) => d.id)],
    );
    await failDeposits(
      client,
      rows.filter((d) => isTrigger(d)),
      reason,
      deps.now(),
      retry,
    );
  });
}

/**
 * A batch that cannot execute is split; a group that cannot execute alone fails (and is retried after a backoff),
 * except a token outside the registry (above its gas cap, or its transfer reverts: its own code decides, so every
 * retry would end the same way): not retried by itself; another deposit of that token to the address tries once.
 */
async function sweepOrFail(deps: AppDeps, chain: ActiveChain, sender: TxSender, plans: Planned[], hooks: BroadcastHooks) {
  try {
    await sweep(deps, chain, sender, plans, hooks);
  } catch (e) {
    if (!(e instanceof GasEstimateError)) throw e;
    if (plans.length > 1) {
      for (const p of plans) await sweepOrFail(deps, chain, sender, [p], hooks);
      return;
    }
    const p = plans[0]!;
    const why = e.message.split("\n")[0];
    const reason =
      e instanceof GasCapError ? `sweep refused: it would cost more gas than a sweep may (${why})` : `sweep cannot execute: ${why}`;
    // A custom token's own code decides (a transfer that burns or reverts): asking again changes nothing.
    const custom = p.charge !== undefined;
    await failGroup(deps, p, custom ? `${reason}; ${NOT_RETRIED}` : reason, !custom);
  }
}

async function sweep(deps: AppDeps, chain: ActiveChain, sender: TxSender, plans: Planned[], hooks: BroadcastHooks) {
  const requests = plans.map((p) => p.request);
  const data = encodeSweep(requests);
  const deposits = plans.flatMap((p) => p.deposits.map((d) => ({ d, fee: p.fees.get(d.id)! })));
  const ids = deposits.map((x) => x.d.id);
  let sweepId = ""; // set by `record`, read by `sent`
  await sender.sendTransaction({
    to: chain.factory!,
    data,
    gasCap: sweepGasCap(plans.length, deps.config.SWEEP_GAS_CAP_PER_WALLET),
    hooks,
    // Under the signer's lock: the deposits must still be waiting and their groups idle (another replica may have
    // swept them since we read them); the row locks hold until the sweep is recorded.
    claim: async (client) => {
      // A custom token's sweep: the merchant's tank must still cover it (merchant row locked, as settlements do).
      const charged = plans[0]!.charge;
      if (charged !== undefined) {
        const merchantId = plans[0]!.deposits[0]!.merchant_id;
        await client.query(`SELECT id FROM merchants WHERE id = $1 FOR NO KEY UPDATE`, [merchantId]);
        if ((await gasTankBalance(client, merchantId)) < charged) return false;
      }
      const { rows } = await client.query(
        `SELECT id FROM vault_deposits WHERE id = ANY($1) AND status IN ('detected', 'failed') FOR UPDATE`,
        [ids],
      );
      if (rows.length !== ids.length) return false;
      const busy = await client.query(
        `SELECT 1 FROM vault_deposits WHERE chain_id = $1 AND (address, token_address) IN (SELECT * FROM unnest($2::text[], $3::text[]))
            AND status IN ('processing', 'held') LIMIT 1`,
        [chain.chainId, plans.map((p) => p.group.address), plans.map((p) => p.group.token)],
      );
      return !busy.rowCount;
    },
    record: async (client, tx) => {
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO vault_sweeps (chain_id, signer, nonce, tx_hash, raw_tx, deposit_ids, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'signed', $7, $7) RETURNING id`,
        [tx.chainId, tx.from, tx.nonce, tx.hash, tx.rawTx, ids, new Date(deps.now())],
      );
      sweepId = rows[0]!.id;
      const charged = plans[0]!.charge;
      if (charged !== undefined)
        await debitVaultSweepFee(client, { sweepId, merchantId: plans[0]!.deposits[0]!.merchant_id, chainId: chain.chainId }, charged);
      for (const { d, fee } of deposits)
        await transitionDeposit(client, d.id, {
          from: ["detected", "failed"],
          to: "processing",
          reason: `sweep ${tx.hash} signed`,
          now: deps.now(),
          set: { sweep_id: sweepId, fee: fee.toString(), net_amount: (BigInt(d.amount) - fee).toString() },
          data: { txHash: tx.hash, ...(plans[0]!.charge !== undefined && { gasTankFeeMicros: plans[0]!.charge.toString() }) },
        });
    },
    // Called after `record` committed, in the same sendTransaction.
    sent: async (tx) => {
      await withTransaction(deps.db, (client) =>
        transitionSweep(client, sweepId, { from: ["signed"], to: "sent", reason: `broadcast ${tx.hash}`, now: deps.now() }),
      );
    },
  });
}
