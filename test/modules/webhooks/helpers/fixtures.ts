import { randomUUID } from "node:crypto";
import type { AppDeps } from "../../../../core/deps.js";
import { withTransaction } from "../../../../db/client.js";
import { createApiKey, createMerchant } from "../../../../modules/merchants/index.js";
import { enqueuePaymentWebhook, type PaymentWebhookEvent } from "../../../../modules/webhooks/index.js";
import { boxOf, openField, type SealedField } from "../../../../core/sealed-fields.js";

export async function merchantWithKey(deps: AppDeps, name = "Webhook Shop") {
  const merchant = await createMerchant(deps.db, { name });
  const key = await createApiKey(deps.db, merchant.id);
  return { merchant, apiKey: key.key };
}

/**
 * What a sealed column holds for its owner (merchant for `webhook_configs`, vault for `vault_webhook_configs`),
 * opened; throws unless the stored value is sealed (`enc:v1:`), so a plaintext row never passes.
 */
export async function storedPlaintext(deps: AppDeps, field: SealedField, ownerId: string): Promise<string | null> {
  const [table, column] = field.split(".") as [string, string];
  const owner = table === "vault_webhook_configs" ? "vault_id" : "merchant_id";
  const { rows } = await deps.db.pool.query(`SELECT ${column} AS v FROM ${table} WHERE ${owner} = $1`, [ownerId]);
  if (rows.length !== 1) throw new Error(`${rows.length} ${table} rows for ${ownerId}`);
  const stored = rows[0].v as string | null;
  if (stored !== null && !/^enc:v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/.test(stored)) throw new Error(`${field} is stored unsealed: ${stored}`);
  return openField(boxOf(deps.config), field, ownerId, stored);
}

/** A payment webhook body with the spec's common fields (what payments/serialize.ts builds). */
export function paymentPayload(event: PaymentWebhookEvent, paymentId: string, timestamp: number, extra: Record<string, unknown> = {}) {
  return {
    event,
    paymentId,
    orderId: `order-${paymentId.slice(0, 8)}`,
    merchant: "0x1111111111111111111111111111111111111111",
    recipientAddress: "0x2222222222222222222222222222222222222222",
    amount: "12.5",
    token: "0x3333333333333333333333333333333333333333",
    chainId: 137,
    status: event === "payment.completed" ? "completed" : event.slice("payment.".length),
    timestamp,
    ...extra,
  };
}

/** Enqueues a payment event in its own transaction, as the payment code does inside its state change. */
export async function enqueuePayment(
  deps: AppDeps,
  merchantId: string,
  event: PaymentWebhookEvent = "payment.completed",
  extra: Record<string, unknown> = {},
) {
  const paymentId = randomUUID();
  const payload = paymentPayload(event, paymentId, deps.now(), extra);
  const written = await withTransaction(deps.db, (client) =>
    enqueuePaymentWebhook(client, { merchantId, paymentId, event, payload, dedupeKey: `${event}:${paymentId}` }),
  );
  return { paymentId, payload, written };
}

/** A clock tests move by hand. */
export function manualClock(start = Date.now()) {
  let t = start;
  return {
    now: () => t,
    set: (v: number) => void (t = v),
    advance: (ms: number) => void (t += ms),
  };
}
