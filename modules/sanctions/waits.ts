import type { AppDeps } from "../../core/deps.js";

// Screening that could not finish (docs/sanctions.md, "Outages"): under SANCTIONS_FAIL_MODE=closed a payment or a
// recovery whose screening is `unavailable` (a source did not answer) or `unidentified` (a native-coin sender could
// not be identified) waits, with a row in `sanctions_screenings`. The settler leaves it out of its batches until
// `retry_at`. An unidentified sender is particular to the payment and may never resolve by itself (coin sent through a
// contract, history the node no longer has): 30 s after the first try, doubling up to 15 minutes, so such rows
// neither re-run their searches (up to 200 RPC calls) on every pass nor fill the batch that newer payments need. An
// unavailable source blocks every payment of the chain alike and is retried by its own breaker (sources.ts): 5 s, so
// payments settle as soon as it answers again. The row is deleted once the subject is
// screened (clear or held), settles under SANCTIONS_FAIL_MODE=open, or the operator releases it; `sanctions list`
// shows the rest.

export type WaitSubject = "payment" | "recovery";
export type WaitKind = "unavailable" | "unidentified";

/** `unidentified`: the delay after the n-th failed screening in a row is WAIT_FIRST_MS * 2^(n-1), at most WAIT_MAX_MS. */
const WAIT_FIRST_MS = 30_000;
const WAIT_MAX_MS = 15 * 60_000;
/** `unavailable`: the retry delay (ms). */
export const UNAVAILABLE_RETRY_MS = 5_000;

/**
 * SQL condition: the subject (`idExpr`, a uuid expression) is not backing off at time `nowParam` (a timestamptz
 * parameter). Under SANCTIONS_FAIL_MODE=open nothing waits, so callers leave the condition out.
 */
export const notBackingOff = (subject: WaitSubject, idExpr: string, nowParam: string) =>
  `NOT EXISTS (SELECT 1 FROM sanctions_screenings w WHERE w.subject = '${subject}' AND w.subject_id = ${idExpr} AND w.retry_at > ${nowParam})`;

/** Records one more failed screening of each subject (attempts, reason, next retry). */
export async function recordWaits(
  deps: Pick<AppDeps, "db" | "now">,
  subject: WaitSubject,
  waits: { id: string; paymentId: string; chainId: number; kind: WaitKind; reason: string }[],
): Promise<void> {
  if (!waits.length) return;
  const now = deps.now();
  const delay = (a: string) => `make_interval(secs => ${a}::double precision / 1000)`;
  const backoff = `CASE WHEN EXCLUDED.kind = 'unavailable' THEN $3::double precision
                        ELSE least($9::double precision * power(2, sanctions_screenings.attempts), $10::double precision) END`;
  await deps.db.pool.query(
    `INSERT INTO sanctions_screenings (subject, subject_id, payment_id, chain_id, kind, reason, attempts, first_at, last_at, retry_at)
     SELECT $1::text, w.id, w.payment_id, w.chain_id, w.kind, w.reason, 1, $2::timestamptz, $2::timestamptz,
            $2::timestamptz + ${delay(`CASE WHEN w.kind = 'unavailable' THEN $3::double precision ELSE $9::double precision END`)}
       FROM unnest($4::uuid[], $5::uuid[], $6::int[], $7::text[], $8::text[]) AS w(id, payment_id, chain_id, kind, reason)
     ON CONFLICT (subject, subject_id) DO UPDATE SET
       kind = EXCLUDED.kind, reason = EXCLUDED.reason, attempts = sanctions_screenings.attempts + 1, last_at = EXCLUDED.last_at,
       retry_at = EXCLUDED.last_at + ${delay(`(${backoff})`)}`,
    [
      subject,
      new Date(now),
      UNAVAILABLE_RETRY_MS,
      waits.map((w) => w.id),
      waits.map((w) => w.paymentId),
      waits.map((w) => w.chainId),
      waits.map((w) => w.kind),
      waits.map((w) => w.reason.slice(0, 1000)),
      WAIT_FIRST_MS,
      WAIT_MAX_MS,
    ],
  );
}

/** A pool or a transaction's client. */
export type Queryable = { query(text: string, values?: unknown[]): Promise<unknown> };

/** The subjects are screened (clear or held), settled under `open`, or released: they no longer wait. */
export async function clearWaits(db: Queryable, subject: WaitSubject, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await db.query(`DELETE FROM sanctions_screenings WHERE subject = $1 AND subject_id = ANY($2::uuid[])`, [subject, ids]);
}
