// The webhooks module's one door: other code imports only this file.
export { claimDueDeliveries, signingKeyOf } from "./claim.js";
export {
  deleteWebhook,
  getWebhook,
  putWebhook,
  putWebhookBody,
  putWebhookConfig,
  regenerateSecretBody,
  regenerateWebhookSecret,
  type WebhookConfigView,
} from "./config.js";
export { DELIVERY_TIMEOUT_MS } from "./deliver.js";
export { deliveriesQuery, DELIVERY_STATUSES, type DeliveryView, getDelivery, listDeliveries, resendDelivery } from "./deliveries.js";
export { createWebhookDispatcher, type DispatcherOptions, UNREADABLE_KEY, type WebhookDispatcher } from "./dispatcher.js";
export { DEFAULT_PAYMENT_EVENTS, PAYMENT_EVENTS, VAULT_SUBSCRIPTIONS } from "./events.js";
export { enqueuePaymentWebhook, enqueueVaultWebhook, type PaymentWebhookEvent, type VaultWebhookEvent } from "./outbox.js";
export { resealWebhookSecrets } from "./reseal-secrets.js";
export { generateWebhookSecret } from "./secret.js";
export { bodySignature, webhookHeaders } from "./sign.js";
export { sendTestEvent, TEST_EVENT } from "./test-event.js";
export { HTTP_LOOPBACK_ERROR, PRIVATE_TARGET_ERROR, webhookUrlPolicy, type WebhookUrlPolicy } from "./url-policy.js";
export {
  deleteVaultWebhookConfig,
  getVaultWebhookConfig,
  putVaultWebhookBody,
  putVaultWebhookConfig,
  regenerateVaultWebhookSecret,
  validateVaultWebhookInput,
  viewVaultWebhookConfig,
} from "./vault-config.js";
