import { refreshedPaymentWebhookBody } from "../modules/payments/index.js";
import { createWebhookDispatcher, type DispatcherOptions } from "../modules/webhooks/index.js";
import { defineProcessor, type Processor } from "./runner.js";

export type WebhookDispatcherProcessor = Processor & { close(): Promise<void> };

/**
 * Delivers the webhook outbox (payment and Vault webhooks): each pass claims due deliveries with
 * FOR UPDATE SKIP LOCKED under a lease, sends them with undici (30 s timeout, at most `concurrency` at
 * once), records each attempt and schedules retries (5 then 10 minutes) from `deps.now()`. Several
 * replicas may run it side by side. Options are for tuning and tests (`tls.ca` trusts a test receiver).
 * A payment event's cross-chain `bridge` block is brought up to date before its first attempt. The runner's stop()
 * closes its HTTP agents.
 */
export function webhookDispatcher(opts: DispatcherOptions = {}): WebhookDispatcherProcessor {
  const engine = createWebhookDispatcher({ refreshBody: refreshedPaymentWebhookBody, ...opts });
  return defineProcessor({
    name: "webhook-dispatcher",
    intervalMs: 1_000,
    async run(deps) {
      await engine.run(deps);
    },
    close: () => engine.close(),
  });
}
