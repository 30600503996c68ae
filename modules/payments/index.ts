// The payments module's one door: other code imports only this file.
export { nativeBalances, walletBalances } from "./balances.js";
export { cancelPayment, cannotCancelIn, HAS_FUNDS, HAS_UNCOUNTED_FUNDS } from "./cancel.js";
export { type CreatedPayment, createPayment } from "./create.js";
export { paymentDetail, type PaymentDetail } from "./detail.js";
export { detectIndexedBlock, detectLostDeposits, detectPayments } from "./detect.js";
export { expirePayments } from "./expire.js";
export { computeFees, gasFeeUsd18, PROCESSING_FEE_USD18, unitsToUsd18Ceil } from "./fees.js";
export { insertBatcher, insertBatchStatement, insertPayments } from "./insert-batch.js";
export { insertOneStatement, type NewPaymentRow } from "./insert-one.js";
export { listPayments, listPaymentsQuery, type PaymentPage } from "./list.js";
export { getPromoStatus, hasPromotion, PROMO_FREE_TRANSACTIONS, promoCounts, promoStatus } from "./promo.js";
export { eip681Uri, payerStage, type PayerStage, publicPaymentView, type PublicPaymentView, toPublicView } from "./public-view.js";
export { type QuoteFees } from "./quote.js";
export { recoverFunds, recoverFundsBody, RECOVERY_TANK_SHORT } from "./recover.js";
export { recoveryCharge, type RecoveryCharge } from "./recovery-fee.js";
export { reopenAfterReorg } from "./reorg.js";
export { feesOf, paymentListItem, paymentWebhookPayload, totalFeeUnits } from "./serialize.js";
export { transition } from "./state-machine.js";
export { PAYMENT_STATUSES, type PaymentStatus, TRANSITIONS } from "./status.js";

export { type PaymentRow } from "./types.js";
export { recoverableUnits } from "./unexpected-funds.js";
export { createPaymentBody } from "./validate-create.js";
export { hashMatches, redirectHash } from "./verify-hash.js";
export { verifyPayment, verifyQuery } from "./verify.js";
export { withdrawPayment } from "./withdraw.js";
export { type Blocked, type FundsScreening, isBlocked, SANCTIONS_HELD_MESSAGE } from "./funds-screening.js";
export { RECOVERY_MOVES, type RecoveryStatus, transitionRecovery } from "./transition.js";
