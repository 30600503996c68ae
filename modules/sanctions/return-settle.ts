import type pg from "pg";
import { getAddress, type Address, type Hex, type TransactionReceipt } from "viem";
import type { ActiveChain } from "../../chains/runtime.js";
import { isReceiptNotFound, reconcileStored } from "../../chains/tx-sender.js";
import type { AppDeps } from "../../core/deps.js";
import { firstLine, logger } from "../../core/log.js";
import { withTransaction } from "../../db/client.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { transition, transitionRecovery } from "../payments/index.js";
import { transitionDeposit } from "../vault/index.js";
import { confirmedTip, readVaultDepositCursor, vaultConfirmations } from "../vault/index.js";
import { lockSubject, resolveHold, SUBJECT_TABLE, subjectIdOf, type HoldRow } from "./holds.js";
import { transitionReturn, type HoldStatus, type ReturnStatus } from "./transition.js";

type Deps = Pick<AppDeps, "db" | "clients" | "config" | "now">;

type ReturnRow = {
  id: string;
  hold_id: string;
  status: "signed" | "sent" | "mined";
  signer: string;
  nonce: number;
  tx_hash: Hex;
  raw_tx: Hex;
  block_number: string | null;
  subject: string;
  to_address: string;
  token: string;
  amount_units: string;
  actor: string;
  reason: string;
};

/**
 * Follows the returns of held funds (`sanctions return`, return.ts) on a chain: a settler step, and what the CLI runs
 * while it waits. It needs no key (the factory owner signed them; the settler only resends the stored bytes):
 * - signed or sent: mined (succeeded or reverted) -> `mined`; dropped -> `dropped` (nothing moved, the hold stays as it
 *   was: the operator may run the return again); else the same bytes again;
 * - mined: its receipt is read again (a re-org that took it away sends it back to `sent`). A reverted one becomes
 *   `reverted` only at the chain's finality depth (a re-org may still bring it back as a success). Once it is the chain's
 *   finality depth deep and indexed (for a vault deposit: recorded past by the deposit recorder, whose tip the
 *   sweeper reads balances at), so the address's balance is counted without the returned funds, it completes, in one
 *   transaction: the return `completed`, the hold `returned` with the audit row (the operator's name and reason), and
 *   the subject's move.
 */
export async function settleReturns(deps: Deps, chain: ActiveChain): Promise<void> {
  const client = deps.clients.get(chain.chainId);
  if (!client) return;
  const { rows } = await deps.db.pool.query<ReturnRow>(
    `SELECT r.id, r.hold_id, r.status, r.signer, r.nonce, r.tx_hash, r.raw_tx, r.block_number::text, h.subject, r.to_address, r.token,
            r.amount_units::text, r.actor, r.reason
       FROM sanctions_returns r JOIN sanctions_holds h ON h.id = r.hold_id
      WHERE r.chain_id = $1 AND r.status IN ('signed', 'sent', 'mined') ORDER BY r.nonce`,
    [chain.chainId],
  );
  if (!rows.length) return;
  // Each move in a transaction of its own, with its audit row; none if the row left `from` meanwhile.
  const move = (id: string, from: ReturnStatus[], to: ReturnStatus, set?: Parameters<typeof transitionReturn>[2]["set"]) =>
    withTransaction(deps.db, (c) => transitionReturn(c, id, { from, to, set, now: deps.now() }));

  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const signer of new Set(rows.filter((r) => r.status !== "mined").map((r) => r.signer))) {
    const txs = rows.filter((r) => r.status !== "mined" && r.signer === signer).map((r) => ({ ...r, hash: r.tx_hash, rawTx: r.raw_tx }));
    await reconcileStored({ db: deps.db, chain, client, address: getAddress(signer) }, txs, async (r, outcome) => {
      const open: ReturnStatus[] = ["signed", "sent"];
      // Mined, whether it succeeded or reverted: only at finality is its outcome taken (a re-org may change it), so
      // until then the return stays open and the hold can be neither decided nor returned again.
      if (outcome.status === "mined" || outcome.status === "reverted") {
        await move(r.id, open, "mined", { blockNumber: outcome.receipt.blockNumber.toString(), txHash: outcome.receipt.transactionHash });
        Object.assign(byId.get(r.id)!, { status: "mined", block_number: outcome.receipt.blockNumber.toString() });
      } else if (outcome.status === "dropped")
        await move(r.id, open, "dropped", {
          error: `return transaction ${r.hash} dropped (its nonce went to another transaction): nothing moved`,
        });
      else if (r.status === "signed") await move(r.id, ["signed"], "sent");
    });
  }

  const mined = rows.filter((r) => r.status === "mined");
  if (!mined.length) return;
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const indexed = (await indexerProgress(deps.db))?.find((p) => p.chainId === chain.chainId)?.indexedBlock;
  // A vault address's balance is read by the sweeper at the deposit recorder's confirmed tip: once it is past the
  // return, the group's balance no longer has the returned funds (else they would be taken for an unrecorded deposit).
  const vaultCursor = mined.some((r) => r.subject === "vault_deposit") ? await readVaultDepositCursor(deps, chain.chainId) : null;
  const vaultTip = vaultCursor ? confirmedTip(vaultCursor.latest, vaultConfirmations(deps, chain)) : -1n;
  for (const r of mined) {
    let receipt: TransactionReceipt;
    try {
      receipt = await client.getTransactionReceipt({ hash: r.tx_hash });
    } catch (e) {
      if (!isReceiptNotFound(e)) {
        logger("sanctions").warn({ chainId: chain.chainId, txHash: r.tx_hash, error: firstLine(e) }, "return receipt unknown, next pass");
        continue;
      }
      // Re-orged away: sent again from the stored bytes by the next pass.
      await move(r.id, ["mined"], "sent", { blockNumber: null });
      continue;
    }
    const block = receipt.blockNumber;
    // Mined in another block (a re-org): the same status, not a move.
    if (r.block_number !== block.toString())
      await deps.db.pool.query(`UPDATE sanctions_returns SET block_number = $2, updated_at = now() WHERE id = $1 AND status = 'mined'`, [
        r.id,
        block.toString(),
      ]);
    if (head - block + 1n < BigInt(chain.finalityBlocks)) continue;
    if (receipt.status !== "success") {
      await move(r.id, ["mined"], "reverted", { error: `return transaction ${r.tx_hash} reverted: nothing moved` });
      continue;
    }
    const seen = indexed !== undefined && BigInt(indexed) >= block && (r.subject !== "vault_deposit" || vaultTip >= block);
    if (seen) await completeReturn(deps, r);
  }
}

/** The return's completion, in one transaction: the row, the hold, its audit row and the subject's move. */
async function completeReturn(deps: Deps, r: ReturnRow) {
  await withTransaction(deps.db, async (c) => {
    const now = deps.now();
    const { rows: holds } = await c.query<HoldRow>(`SELECT * FROM sanctions_holds WHERE id = $1`, [r.hold_id]);
    const hold = holds[0]!;
    // The subject's row first, as release, reject and the senders lock it (holds.ts).
    await lockSubject(c, hold.subject, subjectIdOf(hold));
    const { rows: cur } = await c.query<{ status: HoldStatus }>(`SELECT status FROM sanctions_holds WHERE id = $1 FOR UPDATE`, [hold.id]);
    const was = cur[0]!.status;
    // Release and reject refuse while a return is in flight; a held deposit re-orged away is dropped by the recorder.
    const note = was === "held" || was === "rejected" ? null : `the funds left, but the hold was already ${was}: look at the subject`;
    const done = await transitionReturn(c, r.id, { from: ["mined"], to: "completed", set: { error: note }, now });
    if (!done) return;
    if (note) {
      logger("sanctions").error(
        { holdId: hold.id, returnId: r.id, holdStatus: was },
        "return completed on a hold no longer held or rejected",
      );
      return;
    }
    const funds = { to: getAddress(r.to_address), token: getAddress(r.token), amountUnits: r.amount_units, transactionHash: r.tx_hash };
    const why = `sanctions hold: ${r.amount_units} units returned to ${funds.to} by ${r.actor}: ${r.reason}`;
    const move = await moveSubject(c, hold, was === "held", funds, why, now);
    await resolveHold(c, hold, { from: [was], to: "returned" }, { action: "return", ...move }, { actor: r.actor, reason: r.reason }, now);
  });
}

/** The subject's move when its funds are returned; a subject already rejected keeps its (final) status. */
async function moveSubject(
  c: pg.PoolClient,
  hold: HoldRow,
  held: boolean,
  funds: { to: Address; token: Address; amountUnits: string; transactionHash: Hex },
  why: string,
  now: number,
): Promise<{ from: string; to: string }> {
  if (hold.subject === "payment") {
    const moved =
      held &&
      (await transition(c, hold.payment_id!, {
        from: ["sanctioned"],
        to: "cancelled",
        reason: why,
        now,
        event: {
          name: "payment.cancelled",
          extra: { reason: "sanctions", sanctionedAddress: getAddress(hold.address), fundsReturned: funds },
        },
      }));
    if (moved) return { from: "sanctioned", to: "cancelled" };
  } else if (hold.subject === "recovery") {
    const error = `returned by sanctions screening: ${funds.amountUnits} units to ${funds.to}`;
    const moved = await transitionRecovery(c, hold.recovery_id!, { from: ["requested"], to: "failed", reason: error, set: { error }, now });
    if (moved) return { from: "requested", to: "failed" };
  } else {
    // The business receives none of it and pays no fee on it.
    const moved = await transitionDeposit(c, hold.deposit_id!, {
      from: ["held"],
      to: "returned",
      reason: why,
      now,
      data: funds,
      set: { fee: "0", net_amount: "0" },
    });
    if (moved) return { from: "held", to: "returned" };
  }
  const { rows } = await c.query<{ status: string }>(`SELECT status FROM ${SUBJECT_TABLE[hold.subject]} WHERE id = $1`, [
    subjectIdOf(hold),
  ]);
  return { from: rows[0]!.status, to: rows[0]!.status };
}
