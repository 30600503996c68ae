import { randomUUID } from "node:crypto";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, NotFound } from "../../core/errors.js";
import { withTransaction } from "../../db/client.js";
import { insertDelivery } from "./outbox.js";

// "Send test event" of the dashboard: one outbox row the dispatcher signs and sends like any payment
// webhook (same URL, secret, headers and retry schedule). It is written whatever the webhook's `events`
// list says (the subscription filter is applied by enqueuePaymentWebhook, which this does not use), so a
// merchant can check the receiver before subscribing to anything in particular. docs/webhooks.md.

/** The event name of a test delivery; never a subscribable event. */
export const TEST_EVENT = "webhook.test";

/** The body of a test delivery: no payment fields, so a receiver can tell it apart at once. */
export type TestEventPayload = { event: typeof TEST_EVENT; test: true; webhookId: string; timestamp: number };

/**
 * Queues a `webhook.test` delivery to the merchant's payment webhook, due now. NotFound without a webhook,
 * Conflict when it is inactive (the dispatcher would only skip it). Every call is a new delivery.
 *
 * @example
 * const { deliveryId } = await sendTestEvent(deps, merchant.id); // the dispatcher's next pass sends it
 */
export async function sendTestEvent(
  deps: Pick<AppDeps, "db" | "now">,
  merchantId: string,
): Promise<{ deliveryId: string; payload: TestEventPayload }> {
  const now = deps.now();
  const deliveryKey = `test:${merchantId}:${randomUUID()}`;
  return withTransaction(deps.db, async (client) => {
    const { rows } = await client.query<{ id: string; is_active: boolean }>(
      `SELECT id, is_active FROM webhook_configs WHERE merchant_id = $1 FOR SHARE`,
      [merchantId],
    );
    const config = rows[0];
    if (!config) throw new NotFound("Webhook not configured");
    if (!config.is_active) throw new Conflict("The webhook is inactive: activate it to send a test event");
    const payload: TestEventPayload = { event: TEST_EVENT, test: true, webhookId: config.id, timestamp: now };
    await insertDelivery(client, {
      merchantId,
      kind: "payment",
      event: TEST_EVENT,
      paymentId: null,
      depositId: null,
      vaultId: null,
      dedupeKey: deliveryKey,
      payload,
      at: now,
    });
    const inserted = await client.query<{ id: string }>(`SELECT id FROM webhook_deliveries WHERE dedupe_key = $1`, [deliveryKey]);
    return { deliveryId: inserted.rows[0]!.id, payload };
  });
}
