import type { Db } from "../db/client.js";
import { getDelivery, listDeliveries, parseListQuery, resendDelivery } from "../modules/webhooks/deliveries.js";

// Operator commands (cli/index.ts):
//   webhook list --merchant <id> [--status pending|success|failed] [--limit 1-100]
//   webhook resend --delivery <id>

/** A merchant's deliveries (payment and Vault), newest first. */
export async function cliListDeliveries(db: Db, merchantId: string, opts: { status?: string; limit?: string } = {}) {
  const q = parseListQuery({ status: opts.status, limit: opts.limit ?? "20" });
  if (!q.ok) throw new Error(q.error);
  return listDeliveries(db, merchantId, q.filters);
}

/** Queues one more attempt of a delivery, due now; the running dispatcher sends it. */
export async function cliResendDelivery(db: Db, deliveryId: string, now = Date.now()) {
  const r = await resendDelivery(db, deliveryId, now);
  if (!r.ok) throw new Error(r.error);
  const d = await getDelivery(db, deliveryId);
  return { ...r.delivery, attemptLog: d?.attemptLog ?? [] };
}
