import type pg from "pg";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { transitionHold, type HoldStatus } from "./transition.js";

// The operator's side of sanctions holds (`npm run cli -- sanctions …`, docs/sanctions.md): list.ts lists what is
// held or waits, release.ts lets it settle, reject.ts decides it never settles here, return.ts sends the funds to an
// address the operator names (return-settle.ts completes it). This file has what they share:
// the hold row, the decision, the locked lookup of a subject's open hold and the audit row of a decision.

export type HoldSubject = "payment" | "recovery" | "vault_deposit";
export type { HoldStatus } from "./transition.js";

export type HoldRow = {
  id: string;
  subject: HoldSubject;
  payment_id: string | null;
  recovery_id: string | null;
  deposit_id: string | null;
  chain_id: number;
  address: string;
  source: string;
  from_status: string;
  status: HoldStatus;
  created_at: Date;
  resolved_at: Date | null;
};

export type Decision = { actor: string; reason: string };
/** Exactly one of them. */
export type Target = { paymentId?: string; recoveryId?: string; depositId?: string };

export const NOUN = { payment: "Payment", recovery: "Recovery", vault_deposit: "Deposit" } as const;
/** The table each subject's row is in. */
export const SUBJECT_TABLE = { payment: "payments", recovery: "fund_recoveries", vault_deposit: "vault_deposits" } as const;

/** The id of the hold's subject (a recovery's hold also names its payment). */
export const subjectIdOf = (hold: Pick<HoldRow, "subject" | "payment_id" | "recovery_id" | "deposit_id">): string =>
  hold.subject === "vault_deposit" ? hold.deposit_id! : hold.subject === "recovery" ? hold.recovery_id! : hold.payment_id!;

export function checkDecision(d: Decision): Decision {
  const actor = d.actor?.trim();
  const reason = d.reason?.trim();
  if (!actor) throw new Invalid("an operator name is required");
  if (!reason) throw new Invalid("a reason is required");
  return { actor, reason };
}

/** The subject a target names, with its id (checked: one of them, a uuid). */
export function subjectOf(target: Target): { subject: HoldSubject; id: string } {
  const given = (
    [
      ["payment", target.paymentId],
      ["recovery", target.recoveryId],
      ["vault_deposit", target.depositId],
    ] as const
  ).filter(([, id]) => id);
  if (given.length !== 1) throw new Invalid("give one payment, recovery or deposit");
  const [subject, id] = given[0]!;
  if (!isUuid(id!)) throw new NotFound(`${NOUN[subject]} not found`);
  return { subject, id: id! };
}

export const notHeld = (subject: HoldSubject) => new Conflict(`${NOUN[subject]} is not held by sanctions screening`);

/**
 * The open (`held`) hold of a subject, locked, or null when it has none; NotFound when the subject does not exist.
 * The owner's row is locked first (a payment's for a payment or a recovery, the deposit's for a deposit): the steps
 * that create or close holds (hold-payment.ts, recovery.ts, vault.ts, the signer's claim) lock it first too, so the
 * two orders never cross.
 */
export async function openHold(client: pg.PoolClient, target: Target): Promise<{ subject: HoldSubject; id: string; hold: HoldRow | null }> {
  const { subject, id } = subjectOf(target);
  if (!(await lockSubject(client, subject, id))) throw new NotFound(`${NOUN[subject]} not found`);
  const column = subject === "payment" ? "payment_id" : subject === "recovery" ? "recovery_id" : "deposit_id";
  const { rows } = await client.query<HoldRow>(
    `SELECT * FROM sanctions_holds WHERE ${column} = $1 AND subject = $2 AND status = 'held' FOR UPDATE`,
    [id, subject],
  );
  return { subject, id, hold: rows[0] ?? null };
}

/**
 * Locks the row that owns a subject's holds, in the one order every step that creates, decides or returns a hold
 * uses: the payment's row for a payment or a recovery (the recovery's payment), the deposit's for a vault deposit.
 * False when the subject does not exist.
 */
export async function lockSubject(client: Pick<pg.PoolClient, "query">, subject: HoldSubject, id: string): Promise<boolean> {
  const owner =
    subject === "payment"
      ? await client.query(`SELECT id FROM payments WHERE id = $1 FOR UPDATE`, [id])
      : subject === "recovery"
        ? await client.query(`SELECT p.id FROM fund_recoveries r JOIN payments p ON p.id = r.payment_id WHERE r.id = $1 FOR UPDATE OF p`, [
            id,
          ])
        : await client.query(`SELECT id FROM vault_deposits WHERE id = $1 FOR UPDATE`, [id]);
  return owner.rows.length > 0;
}

/**
 * Resolves a hold (`status.from`: what the caller found it in, under its lock) through its transition (with the audit
 * row of the status change) and writes the decision's audit row (`sanctions_actions`), in the caller's transaction.
 */
export async function resolveHold(
  client: pg.PoolClient,
  hold: Pick<HoldRow, "id" | "payment_id" | "recovery_id" | "deposit_id">,
  status: { from: readonly HoldStatus[]; to: Exclude<HoldStatus, "held"> },
  move: { action: "release" | "reject" | "drop" | "return"; from: string; to: string },
  d: Decision,
  now: number,
) {
  const resolved = await transitionHold(client, hold.id, {
    from: status.from,
    to: status.to,
    reason: `${move.action} by ${d.actor}: ${d.reason}`,
    set: { resolvedAt: new Date(now) },
    now,
  });
  // The callers found the hold in `from` under its lock: anything else is a bug.
  if (!resolved) throw new Error(`sanctions hold ${hold.id} is not ${status.from.join(" or ")}`);
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO sanctions_actions (hold_id, action, actor, reason, subject_from, subject_to, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id::text`,
    [hold.id, move.action, d.actor, d.reason, move.from, move.to, new Date(now)],
  );
  return {
    holdId: hold.id,
    actionId: rows[0]!.id,
    action: move.action,
    paymentId: hold.payment_id,
    recoveryId: hold.recovery_id,
    depositId: hold.deposit_id,
    status: move.to,
    actor: d.actor,
    reason: d.reason,
  };
}

/** The hold's open return (`sanctions_returns` signed, sent or mined: at most one), or null. */
export async function openReturn(client: Pick<pg.PoolClient, "query">, holdId: string) {
  const { rows } = await client.query<{ id: string; status: string }>(
    `SELECT id, status FROM sanctions_returns WHERE hold_id = $1 AND status IN ('signed', 'sent', 'mined')`,
    [holdId],
  );
  return rows[0] ?? null;
}

/**
 * Refuses a decision on a hold whose funds are being returned (an open return): the return decides it when it
 * completes (return-settle.ts), or leaves it as it was if the transaction reverts or drops.
 */
export async function refuseIfReturning(client: Pick<pg.PoolClient, "query">, holdId: string): Promise<void> {
  const open = await openReturn(client, holdId);
  if (open)
    throw new Conflict(
      `A return of these funds is in flight (return ${open.id}, ${open.status}): decide again once it completes, reverts or is dropped (sanctions list --all)`,
    );
}
