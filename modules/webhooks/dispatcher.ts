import PQueue from "p-queue";
import type pg from "pg";
import type { Agent } from "undici";
import type { AppDeps } from "../../core/deps.js";
import { logger } from "../../core/log.js";
import { webhookAttemptDuration, webhookDeliveries } from "../../core/metrics.js";
import { claimDueDeliveries, signingKeyOf, type ClaimedDelivery } from "./claim.js";
import { createWebhookAgent, postWebhook } from "./deliver.js";
import { createAttemptRecorder, recordSkipped } from "./record.js";
import { resealWebhookSecrets } from "./reseal-secrets.js";
import { boxOf } from "../../core/sealed-fields.js";
import { rewriteEventBody } from "../events/index.js";
import { webhookHeaders } from "./sign.js";
import { webhookUrlPolicy } from "./url-policy.js";

/** The error of an attempt whose stored signing key does not open (prefix of the box's reason). */
export const UNREADABLE_KEY = "signing key unreadable: ";

// The delivery engine behind processors/webhook-dispatcher.ts. One pass:
//   claim  - one statement takes due rows with FOR UPDATE SKIP LOCKED, stamps a lease (locked_until,
//            claim_token) and reads each row's webhook (URL, signing key); it commits before any send,
//            so replicas never claim the same attempt at once;
//   send   - outside any transaction, each row is signed and POSTed, at most `concurrency` at a time
//            (p-queue), with undici (30 s timeout, capped response read, no redirects);
//   record - the attempt is logged and the row set to success / next attempt / failed, only if the
//            lease is still ours. A crash between claim and record leaves the lease to expire: the row
//            is claimed again and resent (at least once: duplicates possible, losses not).
// Time (due rows, leases, retry schedule, webhook-timestamp) comes from deps.now().
// Signing keys are stored sealed (./sealed.ts): each is opened just before its attempt is signed. A key
// that does not open (SECRET_KEY changed without SECRET_KEY_PREVIOUS) leaves the delivery pending: it is
// logged, not recorded, and tried again when its lease ends. The first pass re-seals plaintext rows.

export type DispatcherOptions = {
  /** Parallel HTTP deliveries per process (default 16). */
  concurrency?: number;
  /** Lease of a claimed row (default WEBHOOK_LEASE_MS, 3 minutes): at most 3 × concurrency rows are in hand, so a row waits at most 2 rounds of sends (30 s each) plus its own. */
  leaseMs?: number;
  /** Delivery timeout (default 30 s, the spec's). */
  timeoutMs?: number;
  /** Cap of response bytes read (default 16 KiB). */
  maxResponseBytes?: number;
  /** A pass stops claiming after this long (default 30 s), so the runner's heartbeat keeps beating under load. */
  maxPassMs?: number;
  /** Test-only: trust this CA for receivers (e.g. a self-signed test certificate). TLS stays verified. */
  tls?: { ca: string | Buffer };
  /**
   * Takes the engine's warnings and errors as text lines instead of the process's logger (tests collect or
   * silence them this way); the per-attempt outcome lines are then not written.
   */
  log?: (msg: string) => void;
  /**
   * Before a delivery's first attempt: its body brought up to date (a block that describes state which may have moved
   * on since the event, such as a payment's cross-chain `bridge`), or null to keep it. The new body is stored (the
   * delivery and the event feed) before it is signed, so every attempt, the first included, sends the same bytes.
   */
  refreshBody?: (db: Pick<pg.Pool, "query">, d: Pick<ClaimedDelivery, "kind" | "event" | "body">) => Promise<string | null>;
};

export type DispatchStats = { claimed: number; succeeded: number; retrying: number; failed: number; skipped: number };

export type WebhookDispatcher = {
  /** One pass: delivers everything due now (see maxPassMs). Safe in several processes at once. */
  run(deps: AppDeps): Promise<DispatchStats>;
  /** Closes the HTTP agents. */
  close(): Promise<void>;
};

export { claimDueDeliveries };

/** Stores a fresher body of a never-attempted delivery (and its feed event), and sends that from now on. */
async function refreshed(deps: AppDeps, d: ClaimedDelivery, refresh: NonNullable<DispatcherOptions["refreshBody"]>): Promise<void> {
  const body = await refresh(deps.db.pool, d);
  if (body === null || body === d.body) return;
  const { rowCount } = await deps.db.pool.query(
    `UPDATE webhook_deliveries SET body = $2, payload = $4::jsonb WHERE id = $1 AND attempts = 0 AND claim_token = $3`,
    [d.id, body, d.claim_token, body],
  );
  if (rowCount !== 1) return; // the lease was lost meanwhile: whoever holds it now refreshes
  await rewriteEventBody(deps.db.pool, d.id, body);
  d.body = body;
}

export function createWebhookDispatcher(opts: DispatcherOptions = {}): WebhookDispatcher {
  const concurrency = opts.concurrency ?? 16;
  const maxPassMs = opts.maxPassMs ?? 30_000;
  const pino = logger("webhook-dispatcher");
  const log = opts.log ?? ((m: string) => pino.warn(m));
  /** A delivery's attempt outcome, as a log line of the process's logger (not when `opts.log` is given). */
  const outcomeLine = (d: ClaimedDelivery, status: string, fields: Record<string, unknown>) => {
    if (opts.log || status === "success") return;
    const line = { deliveryId: d.id, merchantId: d.merchant_id, kind: d.kind, event: d.event, attempt: d.attempts + 1, ...fields };
    if (status === "failed") pino.warn(line, "webhook delivery failed, no attempt left");
    else pino.info(line, `webhook attempt ${status === "retry" ? "failed, retry scheduled" : status}`);
  };
  const agents = new Map<boolean, Agent>();
  let warned = false;
  let resealed = false;
  const agentFor = (allowPrivate: boolean) => {
    let a = agents.get(allowPrivate);
    if (!a) agents.set(allowPrivate, (a = createWebhookAgent({ allowPrivate, ca: opts.tls?.ca, timeoutMs: opts.timeoutMs })));
    return a;
  };

  const skipReason = (d: ClaimedDelivery) =>
    d.url === null
      ? "webhook configuration deleted"
      : !d.is_active
        ? "webhook inactive"
        : d.kind === "payment" && !d.signing_key
          ? "webhook has no signing key (regenerate its secret)"
          : null;

  return {
    async run(deps) {
      const { allowPrivate, localHttp } = webhookUrlPolicy(deps.config);
      if (allowPrivate && deps.config.NODE_ENV === "production" && !warned) {
        warned = true;
        log("WEBHOOK_ALLOW_PRIVATE is set in production: webhooks may reach loopback and private addresses");
      }
      if (!resealed) {
        const r = await resealWebhookSecrets(deps);
        resealed = true;
        if (r.resealed) log(`sealed ${r.resealed} stored webhook signing key(s) under SECRET_KEY`);
        if (r.unreadable) log(`${r.unreadable} stored webhook signing key(s) open with no configured key (see SECRET_KEY_PREVIOUS)`);
      }
      const box = boxOf(deps.config);
      const agent = agentFor(allowPrivate);
      const recorder = createAttemptRecorder(deps.db);
      const stats: DispatchStats = { claimed: 0, succeeded: 0, retrying: 0, failed: 0, skipped: 0 };

      const deliverOne = async (d: ClaimedDelivery) => {
        try {
          const reason = skipReason(d);
          if (reason) {
            await recordSkipped(deps.db, d, reason, deps.now());
            stats.skipped++;
            webhookDeliveries.labels(d.kind, "skipped").inc();
            outcomeLine(d, "skipped", { reason });
            return;
          }
          if (d.attempts === 0 && opts.refreshBody) await refreshed(deps, d, opts.refreshBody);
          let signingKey: string | null | undefined;
          let unreadable = "";
          try {
            signingKey = signingKeyOf(box, d);
          } catch (e) {
            unreadable = UNREADABLE_KEY + (e as Error).message;
          }
          // A stored key no configured SECRET_KEY opens is a failed attempt (retried, then failed; resend once the
          // key is back), never a delivery claimed again every lease for ever.
          const outcome =
            signingKey === undefined
              ? { ok: false, httpStatus: null, response: null, error: unreadable, durationMs: 0 }
              : await postWebhook(
                  {
                    url: d.url!,
                    body: d.body,
                    headers: webhookHeaders({
                      scheme: d.kind,
                      id: d.id,
                      timestampSeconds: Math.floor(deps.now() / 1000),
                      rawBody: d.body,
                      signingKey,
                    }),
                  },
                  { dispatcher: agent, allowPrivate, localHttp, timeoutMs: opts.timeoutMs, maxResponseBytes: opts.maxResponseBytes },
                );
          const status = await recorder.record(d, d.url!, outcome, deps.now());
          if (status === "success") stats.succeeded++;
          else if (status === "pending") stats.retrying++;
          else if (status === "failed") stats.failed++;
          const label = status === "pending" ? "retry" : status;
          webhookDeliveries.labels(d.kind, label).inc();
          if (signingKey !== undefined) webhookAttemptDuration.labels(d.kind).observe(outcome.durationMs / 1000);
          outcomeLine(d, label, { httpStatus: outcome.httpStatus, error: outcome.error, ms: outcome.durationMs });
        } catch (e) {
          // Not recorded: the lease expires and the delivery is claimed again. Nothing is lost.
          webhookDeliveries.labels(d.kind, "error").inc();
          if (opts.log) opts.log(`delivery ${d.id}: ${(e as Error).message}`);
          else pino.error({ err: e, deliveryId: d.id }, "delivery not recorded; sent again when its lease ends");
        }
      };

      const queue = new PQueue({ concurrency });
      const started = Date.now();
      while (Date.now() - started < maxPassMs) {
        const room = 3 * concurrency - queue.size - queue.pending;
        const claimed = room > 0 ? await claimDueDeliveries(deps.db, deps.now(), room, opts.leaseMs ?? deps.config.WEBHOOK_LEASE_MS) : [];
        stats.claimed += claimed.length;
        for (const d of claimed) void queue.add(() => deliverOne(d));
        if (claimed.length < room) {
          if (claimed.length === 0 && queue.size + queue.pending === 0) break;
          await queue.onIdle(); // nothing more due right now: finish the work in hand, then look again
        } else {
          await queue.onSizeLessThan(concurrency); // keep a batch queued while the next one is claimed
        }
      }
      await queue.onIdle();
      return stats;
    },
    async close() {
      await Promise.all([...agents.values()].map((a) => a.close()));
      agents.clear();
    },
  };
}
