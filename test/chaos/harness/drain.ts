import type pg from "pg";
import type { ApiCall } from "./api-client.js";
import type { Merchant, PaymentRecord } from "./driver.js";
import type { WebhookReceiver } from "./webhook-receiver.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Processors whose loop runs at least every second: after the last fault each must have finished a pass. */
export const FAST_PROCESSORS = ["detector", "gas-tank", "settler", "webhook-dispatcher", "vault-deposits", "vault-sweeper"];
export const ALL_PROCESSORS = [...FAST_PROCESSORS, "expiry", "sync-pruner"];

/**
 * Health is green when GET /api/health answers 200 "ok" (database, chain RPC, indexer ready), the indexer
 * has indexed a block mined after the last fault (`minIndexedBlock`: a killed indexer still shows its old
 * progress, so "ready" alone proves nothing) and is within 5 blocks of the chain, every processor's heartbeat
 * is fresh by the service's own rule (120 s), and each fast processor has completed a pass since the last
 * fault ended. Returns ms from `since`.
 */
export async function waitHealthGreen(
  baseUrl: string,
  since: number,
  minIndexedBlock: number,
  boundMs: number,
): Promise<{ ms: number; body: unknown }> {
  let last: unknown = null;
  for (;;) {
    try {
      const res = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(5000) });
      const body = (await res.json()) as any;
      last = body;
      const procs = new Map<string, { lastRunAt: number; ok: boolean }>(body.processors.map((p: any) => [p.name, p]));
      const green =
        res.status === 200 &&
        body.status === "ok" &&
        body.indexer.chains.every((c: any) => c.lagBlocks !== null && c.lagBlocks <= 5 && c.indexedBlock >= minIndexedBlock) &&
        ALL_PROCESSORS.every((n) => procs.get(n)?.ok) &&
        FAST_PROCESSORS.every((n) => (procs.get(n)?.lastRunAt ?? 0) > since);
      if (green) return { ms: Date.now() - since, body };
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() - since > boundMs) throw new Error(`health not green ${boundMs} ms after the last fault: ${JSON.stringify(last)}`);
    await sleep(250);
  }
}

/** Waits until every fully paid payment is completed and every partial one shows what was received. */
export async function waitSettled(pool: pg.Pool, records: PaymentRecord[], timeoutMs: number, log: (m: string) => void) {
  const paid = records.filter((r) => r.paymentId && r.dueUnits !== undefined && r.sentUnits >= r.dueUnits);
  const partial = records.filter((r) => r.paymentId && r.dueUnits !== undefined && r.sentUnits > 0n && r.sentUnits < r.dueUnits);
  const ids = [...paid, ...partial].map((r) => r.paymentId!);
  const t0 = Date.now();
  let lastReport = 0;
  for (;;) {
    const { rows } = await pool
      .query<{ id: string; status: string; received_units: string }>(`SELECT id, status, received_units FROM payments WHERE id = ANY($1)`, [
        ids,
      ])
      .catch(() => ({ rows: [] as { id: string; status: string; received_units: string }[] }));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const waitingPaid = paid.filter((r) => byId.get(r.paymentId!)?.status !== "completed");
    const waitingPartial = partial.filter((r) => byId.get(r.paymentId!)?.received_units !== r.sentUnits.toString());
    if (waitingPaid.length === 0 && waitingPartial.length === 0) return Date.now() - t0;
    if (Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      const statuses: Record<string, number> = {};
      for (const r of waitingPaid)
        statuses[byId.get(r.paymentId!)?.status ?? "?"] = (statuses[byId.get(r.paymentId!)?.status ?? "?"] ?? 0) + 1;
      log(`drain: ${waitingPaid.length} paid not completed yet ${JSON.stringify(statuses)}, ${waitingPartial.length} partial not recorded`);
    }
    if (Date.now() - t0 > timeoutMs) return -1;
    await sleep(500);
  }
}

/**
 * Until every outbox row of our merchants has been answered 2xx by the receiver: rows that failed (the
 * receiver's 500s) or wait for a retry minutes away are resent through the API's resend route; rows
 * whose lease a killed dispatcher still holds are left until the lease ends (the route refuses them).
 */
export async function drainWebhooks(o: {
  pool: pg.Pool;
  api: ApiCall;
  merchants: Merchant[];
  receiver: WebhookReceiver;
  timeoutMs: number;
  log: (m: string) => void;
}): Promise<{ resends: number; ms: number; undelivered: number }> {
  const t0 = Date.now();
  const keyOf = new Map(o.merchants.map((m) => [m.id, m.apiKey]));
  let resends = 0;
  let lastReport = 0;
  for (;;) {
    const delivered = new Set(
      o.receiver
        .deliveries()
        .filter((d) => d.delivered > 0)
        .map((d) => d.webhookId),
    );
    const { rows } = await o.pool.query<{
      id: string;
      merchant_id: string;
      status: string;
      next_attempt_at: Date;
      locked_until: Date | null;
    }>(
      `SELECT id, merchant_id, status, next_attempt_at, locked_until FROM webhook_deliveries WHERE merchant_id = ANY($1) AND kind = 'payment'`,
      [o.merchants.map((m) => m.id)],
    );
    // A row recorded `success` that the receiver never answered 2xx is a lost webhook: verification reports it.
    const missing = rows.filter((r) => !delivered.has(r.id) && r.status !== "success");
    if (missing.length === 0) return { resends, ms: Date.now() - t0, undelivered: 0 };
    if (Date.now() - t0 > o.timeoutMs) return { resends, ms: Date.now() - t0, undelivered: missing.length };
    const now = Date.now();
    for (const r of missing) {
      const leased = r.locked_until !== null && r.locked_until.getTime() > now;
      const parked = r.status === "failed" || (r.status === "pending" && r.next_attempt_at.getTime() > now + 2000);
      if (leased || !parked) continue;
      const res = await o.api("POST", `/v1/webhooks/deliveries/${r.id}/resend`, { apiKey: keyOf.get(r.merchant_id)! });
      if (res.status === 202) resends++;
    }
    if (Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      const leased = missing.filter((r) => r.locked_until !== null && r.locked_until.getTime() > now).length;
      o.log(`drain: ${missing.length} webhook(s) not delivered yet (${leased} under a lease), ${resends} resent`);
    }
    await sleep(1000);
  }
}
