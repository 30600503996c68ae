import { getAddress, zeroAddress } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { Invalid } from "../../core/errors.js";
import { SCREENED_PAYMENT_STATUSES } from "./hold-payment.js";
import type { HoldRow, HoldSubject } from "./holds.js";

/** A hold (`sanctions_holds`) with where its funds are and every decision taken on it. */
export type HoldView = {
  kind: "hold";
  holdId: string;
  subject: HoldSubject;
  paymentId: string | null;
  recoveryId: string | null;
  depositId: string | null;
  chainId: number;
  /** The flagged sender (checksummed; the zero address for an accepted unidentified sender) and the source. */
  sanctionedAddress: string;
  source: string;
  /** The hold's status (`held`, `released`, `rejected`, `dropped`, `returned`), and the payment's, recovery's or deposit's. */
  status: string;
  subjectStatus: string;
  /** Where the funds are: the deposit address, the token and the amount (smallest units). */
  depositAddress: string;
  token: string;
  amountUnits: string;
  merchantId: string;
  heldAt: number;
  resolvedAt: number | null;
  actions: { action: string; actor: string; reason: string; at: number }[];
  /**
   * A vault deposit still `held` (open, or rejected: then for good): the other open deposits of its (address,
   * token) that no sweep can take meanwhile (a sweep moves the whole balance). Null otherwise.
   */
  frozen: { deposits: number; amountUnits: string } | null;
  /** The newest return of its funds (`sanctions return`, return.ts), in flight or done; null when none was made. */
  return: { returnId: string; status: string; to: string; amountUnits: string; txHash: string; error: string | null } | null;
};

/** A payment or recovery whose screening could not finish and waits (waits.ts). */
export type WaitView = {
  kind: "screening";
  subject: "payment" | "recovery";
  paymentId: string;
  recoveryId: string | null;
  depositId: null;
  chainId: number;
  status: "waiting";
  /** `unavailable`: a source did not answer (screened again by itself); `unidentified`: the operator may release it. */
  waitKind: "unavailable" | "unidentified";
  reason: string;
  subjectStatus: string;
  depositAddress: string;
  token: string;
  amountUnits: string;
  merchantId: string;
  attempts: number;
  since: number;
  lastTriedAt: number;
  retryAt: number;
};

export type SanctionsListEntry = HoldView | WaitView;

export const LIST_LIMIT_MESSAGE = "--limit must be an integer between 1 and 1000";

/**
 * `sanctions list`: newest first, at most `limit` holds and `limit` waits. By default what needs the operator or
 * blocks funds: open holds, rejected vault deposits that still freeze their (address, token), and payments or
 * recoveries whose screening waits; with `all`, every hold (released, rejected, dropped, returned) too.
 */
export async function listHolds(deps: Pick<AppDeps, "db">, opts: { all?: boolean; limit?: number } = {}): Promise<SanctionsListEntry[]> {
  const limit = opts.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new Invalid(LIST_LIMIT_MESSAGE);
  const { rows } = await deps.db.pool.query<
    HoldRow & {
      subject_status: string;
      deposit_address: string;
      token: string;
      amount_units: string;
      merchant_id: string;
      frozen_deposits: number | null;
      frozen_units: string | null;
    }
  >(
    `SELECT h.*,
            CASE h.subject WHEN 'payment' THEN p.status WHEN 'recovery' THEN r.status ELSE d.status END AS subject_status,
            COALESCE(p.recipient_address, d.address) AS deposit_address,
            CASE h.subject WHEN 'recovery' THEN r.token WHEN 'payment' THEN p.token_address ELSE d.token_address END AS token,
            (CASE h.subject WHEN 'recovery' THEN r.requested_units WHEN 'payment' THEN p.received_units ELSE d.amount END)::text AS amount_units,
            COALESCE(p.merchant_id, d.merchant_id) AS merchant_id,
            f.n AS frozen_deposits, f.units AS frozen_units
       FROM sanctions_holds h
       LEFT JOIN payments p ON p.id = h.payment_id
       LEFT JOIN fund_recoveries r ON r.id = h.recovery_id
       LEFT JOIN vault_deposits d ON d.id = h.deposit_id
       LEFT JOIN LATERAL (
         SELECT count(*)::int AS n, COALESCE(sum(o.amount), 0)::text AS units FROM vault_deposits o
          WHERE d.status = 'held' AND o.chain_id = d.chain_id AND o.address = d.address AND o.token_address = d.token_address
            AND o.id <> d.id AND o.status IN ('detected', 'failed')) f ON h.subject = 'vault_deposit'
      ${opts.all ? "" : "WHERE h.status = 'held' OR (h.status = 'rejected' AND h.subject = 'vault_deposit' AND d.status = 'held')"}
      ORDER BY h.created_at DESC, h.id LIMIT ${limit}`,
  );
  const { rows: actions } = await deps.db.pool.query<{ hold_id: string; action: string; actor: string; reason: string; created_at: Date }>(
    `SELECT hold_id, action, actor, reason, created_at FROM sanctions_actions WHERE hold_id = ANY($1::uuid[]) ORDER BY id`,
    [rows.map((r) => r.id)],
  );
  const { rows: returns } = await deps.db.pool.query<{
    hold_id: string;
    id: string;
    status: string;
    to_address: string;
    amount_units: string;
    tx_hash: string;
    error: string | null;
  }>(
    `SELECT DISTINCT ON (hold_id) hold_id, id, status, to_address, amount_units::text, tx_hash, error FROM sanctions_returns
      WHERE hold_id = ANY($1::uuid[]) ORDER BY hold_id, created_at DESC`,
    [rows.map((r) => r.id)],
  );
  const returnOf = new Map(returns.map((x) => [x.hold_id, x]));
  const holds: HoldView[] = rows.map((r) => ({
    kind: "hold",
    holdId: r.id,
    subject: r.subject,
    paymentId: r.payment_id,
    recoveryId: r.recovery_id,
    depositId: r.deposit_id,
    chainId: r.chain_id,
    sanctionedAddress: getAddress(r.address),
    source: r.source,
    status: r.status,
    subjectStatus: r.subject_status,
    depositAddress: getAddress(r.deposit_address),
    token: getAddress(r.token),
    amountUnits: r.amount_units,
    merchantId: r.merchant_id,
    heldAt: r.created_at.getTime(),
    resolvedAt: r.resolved_at?.getTime() ?? null,
    actions: actions
      .filter((a) => a.hold_id === r.id)
      .map((a) => ({ action: a.action, actor: a.actor, reason: a.reason, at: a.created_at.getTime() })),
    frozen:
      r.subject === "vault_deposit" && r.subject_status === "held"
        ? { deposits: r.frozen_deposits ?? 0, amountUnits: r.frozen_units ?? "0" }
        : null,
    return: ((x) =>
      x
        ? { returnId: x.id, status: x.status, to: getAddress(x.to_address), amountUnits: x.amount_units, txHash: x.tx_hash, error: x.error }
        : null)(returnOf.get(r.id)),
  }));

  const { rows: waits } = await deps.db.pool.query<{
    subject: "payment" | "recovery";
    subject_id: string;
    payment_id: string;
    chain_id: number;
    kind: "unavailable" | "unidentified";
    reason: string;
    attempts: number;
    first_at: Date;
    last_at: Date;
    retry_at: Date;
    subject_status: string;
    deposit_address: string;
    token: string;
    amount_units: string;
    merchant_id: string;
  }>(
    `SELECT w.*, CASE w.subject WHEN 'recovery' THEN r.status ELSE p.status END AS subject_status, p.recipient_address AS deposit_address,
            CASE w.subject WHEN 'recovery' THEN r.token ELSE p.token_address END AS token,
            (CASE w.subject WHEN 'recovery' THEN r.requested_units ELSE p.received_units END)::text AS amount_units, p.merchant_id
       FROM sanctions_screenings w JOIN payments p ON p.id = w.payment_id
       LEFT JOIN fund_recoveries r ON w.subject = 'recovery' AND r.id = w.subject_id
      ${opts.all ? "" : "WHERE (w.subject = 'payment' AND p.status = ANY($1::text[])) OR (w.subject = 'recovery' AND r.status = 'requested')"}
      ORDER BY w.first_at DESC LIMIT ${limit}`,
    opts.all ? [] : [[...SCREENED_PAYMENT_STATUSES]],
  );
  const waiting: WaitView[] = waits.map((w) => ({
    kind: "screening",
    subject: w.subject,
    paymentId: w.payment_id,
    recoveryId: w.subject === "recovery" ? w.subject_id : null,
    depositId: null,
    chainId: w.chain_id,
    status: "waiting",
    waitKind: w.kind,
    reason: w.reason,
    subjectStatus: w.subject_status,
    depositAddress: getAddress(w.deposit_address),
    token: getAddress(w.token ?? zeroAddress),
    amountUnits: w.amount_units,
    merchantId: w.merchant_id,
    attempts: w.attempts,
    since: w.first_at.getTime(),
    lastTriedAt: w.last_at.getTime(),
    retryAt: w.retry_at.getTime(),
  }));
  return [...waiting, ...holds];
}
