import type { Db } from "../db/client.js";
import { getDelivery, listDeliveries, resendDelivery } from "../modules/webhooks/index.js";

// Operator commands (cli/index.ts), on the operations of /v1/webhooks/deliveries without its merchant
// and kind scope:
//   webhook list --merchant <id> [--status pending|success|failed] [--limit 1-100]
//   webhook resend --delivery <id>

/** A merchant's deliveries (payment and Vault), newest first. */
export async function cliListDeliveries(db: Db, merchantId: string, opts: { status?: string; limit?: string } = {}) {
  return listDeliveries(db, { merchantId }, { status: opts.status, limit: opts.limit ?? "20" });
}

/** Queues one more attempt of a delivery, due now; the running dispatcher sends it. */
export async function cliResendDelivery(db: Db, deliveryId: string, now = Date.now()) {
  const delivery = await resendDelivery(db, deliveryId, now);
  const { attemptLog } = await getDelivery(db, deliveryId);
  return { ...delivery, attemptLog };
}
