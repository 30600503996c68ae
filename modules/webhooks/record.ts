import type { Db } from "../../db/client.js";
import type { AttemptOutcome } from "./deliver.js";
import { nextAttemptAt } from "./retry-policy.js";
import type { ClaimedDelivery } from "./claim.js";
import { transitionDeliveries } from "./transition.js";

export type RecordedStatus = "success" | "pending" | "failed" | "lost";

type Item = {
  d: ClaimedDelivery;
  url: string;
  o: AttemptOutcome;
  now: number;
  resolve: (s: RecordedStatus) => void;
  reject: (e: unknown) => void;
};

/**
 * Writes attempt results: logs the attempt (`webhook_attempts`) and moves the delivery on (success, the
 * next attempt's time, or failed), only while the claim still holds (`claim_token`): a result whose
 * lease was taken over by another replica is logged but changes nothing ("lost").
 * Group commit: while one write is in flight, results queue up and go in the next single statement,
 * so a busy dispatcher makes one round trip per batch instead of one per delivery.
 */
export function createAttemptRecorder(db: Db, maxBatch = 100) {
  const queue: Item[] = [];
  let flushing = false;

  async function flush() {
    flushing = true;
    while (queue.length) {
      const batch = queue.splice(0, maxBatch);
      try {
        const statuses = await writeBatch(db, batch);
        batch.forEach((it, i) => it.resolve(statuses[i]!));
      } catch (e) {
        for (const it of batch) it.reject(e);
      }
    }
    flushing = false;
  }

  return {
    record(d: ClaimedDelivery, url: string, o: AttemptOutcome, now: number): Promise<RecordedStatus> {
      return new Promise((resolve, reject) => {
        queue.push({ d, url, o, now, resolve, reject });
        if (!flushing) void flush();
      });
    },
  };
}

async function writeBatch(db: Db, batch: Item[]): Promise<RecordedStatus[]> {
  const rows = batch.map(({ d, url, o, now }) => {
    const attempt = d.attempts + 1;
    const next = o.ok ? null : nextAttemptAt(attempt, d.max_attempts, now);
    return {
      id: d.id,
      token: d.claim_token,
      attempt,
      status: o.ok ? "success" : next === null ? "failed" : "pending",
      next: next === null ? null : new Date(next).toISOString(),
      http: o.httpStatus,
      response: o.response,
      error: o.error,
      at: new Date(now).toISOString(),
      url,
      ms: o.durationMs,
    };
  });
  const { rows: updated } = await transitionDeliveries<{ moved_id: string }>(db.pool, {
    with: `r AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, token uuid, attempt int, status text, next timestamptz,
              http int, response text, error text, at timestamptz, url text, ms int)),
     ins AS (
       INSERT INTO webhook_attempts (delivery_id, attempt, url, http_status, response, error, duration_ms, created_at)
       SELECT id, attempt, url, http, response, error, ms, at FROM r)`,
    using: "r",
    where: "d.id = r.id AND d.claim_token = r.token",
    // A claimed row is pending, or failed if its webhook was deleted during the attempt (config.ts): recorded all the same.
    from: ["pending", "failed"],
    to: { sql: "r.status", among: ["success", "pending", "failed"] },
    set: `attempts = r.attempt, next_attempt_at = COALESCE(r.next, d.next_attempt_at),
          locked_until = NULL, claim_token = NULL,
          last_http_status = r.http, last_response = r.response, last_error = r.error, last_attempt_at = r.at,
          delivered_at = CASE WHEN r.status = 'success' THEN r.at ELSE d.delivered_at END`,
    reason: { sql: "'attempt ' || r.attempt" },
    data: { sql: "jsonb_build_object('attempt', r.attempt, 'httpStatus', r.http, 'error', r.error)" },
    at: { sql: "r.at" },
    select: "SELECT moved_id FROM moved",
    params: [JSON.stringify(rows)],
  });
  const done = new Set(updated.map((u) => u.moved_id));
  return rows.map((r) => (done.has(r.id) ? (r.status as RecordedStatus) : "lost"));
}

/** Ends a delivery without an HTTP attempt (its webhook is gone, inactive or cannot sign). */
export async function recordSkipped(db: Db, d: ClaimedDelivery, reason: string, now: number): Promise<void> {
  await transitionDeliveries(db.pool, {
    where: "d.id = $1 AND d.claim_token = $2",
    from: ["pending", "failed"],
    to: "failed",
    set: "last_error = $3, locked_until = NULL, claim_token = NULL, next_attempt_at = $4",
    reason,
    at: now,
    params: [d.id, d.claim_token, reason, new Date(now)],
  });
}
