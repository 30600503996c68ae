// The bridge module's one door: other code imports only this file.
export { bridgeAuthority } from "./authority.js";
export { PROVIDER_REQUESTS_PER_MINUTE, providerRequestsPerMinute, QUOTES_PER_PAYMENT_PER_MINUTE, type TakeToken } from "./budget.js";
export { CANCEL_SELECTORS } from "./cancel-check.js";
export { bridgeFromConfig, DlnClient, dlnError } from "./dln.js";
export {
  bytesToEvmAddress,
  DLN_ORDER_COMPONENTS,
  DLN_SOLANA_CHAIN_ID,
  deBridgeGateAbi,
  dlnDestinationAbi,
  type DlnOrder,
  dlnOrderId,
  evmAddressToBytes,
  solanaKeyToBytes,
} from "./dln-order.js";
export { assertNoBridgeOrderInFlight, bridgeOrderInFlight, ORDER_IN_FLIGHT } from "./guard.js";
export {
  BRIDGE_OFF,
  bridgeHoldings,
  bridgeHoldingsQuery,
  bridgeOrderBody,
  type BridgeOrderView,
  bridgeQuoteQuery,
  type BridgeQuoteView,
  EXPIRY_EXTENSION_MS,
  type OrderDeps,
  ORDER_OF_ANOTHER,
  type PaymentExpiry,
  paymentOrders,
  readBridgeOrderBody,
  readBridgeQuoteQuery,
  reportBridgeTx,
  startBridgePayment,
} from "./orders.js";
export { applyCancelOutcome, AUTO_CANCEL_MS, CANCEL_RETRY_MS, MAX_CANCEL_REVERTS, runBridgeOrders, statusBudget } from "./poll.js";
export { PROVIDER_ORDER_STATUSES } from "./provider.js";
export { SOLANA_CHAIN_ID, SOLANA_OFF, type SolanaHoldings, solanaKeyHex, solanaKeyOfHex } from "./solana.js";
export { QUOTE_CACHE_TTL_MS } from "./quote-cache.js";
export { type BridgeRef, bridgeRefOf, bridgeRefsOf } from "./refs.js";
export { BRIDGE_ORDER_STATUSES, orderInFlight } from "./transition.js";
export { bridgeOrders } from "./schema.js";
