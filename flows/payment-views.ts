import type { AppDeps } from "../core/deps.js";
import type { Caller } from "../modules/merchants/index.js";
import * as payments from "../modules/payments/index.js";
import { sanctionsBlockedFunds } from "../modules/sanctions/index.js";

// A merchant's payments as the API, the dashboard and the CLI show and act on them: the payments module's views and
// recoveries, with sanctions screening deciding which unexpected funds may be recovered (docs/sanctions.md).

/** Funds held or rejected by sanctions screening are not recoverable (`recoverable: false`, recover answers 409). */
export const fundsScreening: payments.FundsScreening = { blockedFunds: sanctionsBlockedFunds };

/**
 * GET /v1/payments.
 *
 * @example
 * const page = await listPayments(deps, { apiKey }, { limit: "10" });
 */
export const listPayments = (deps: AppDeps, caller: Caller, raw: Record<string, string>) =>
  payments.listPayments(deps, caller, raw, fundsScreening);

/**
 * GET /v1/payments/{paymentId}, GraphQL `payment`: one of the caller's payments, exactly as an item of the list.
 *
 * @example
 * const item = await getPayment(deps, { apiKey }, paymentId);
 */
export const getPayment = (deps: AppDeps, caller: Caller, paymentId: string) =>
  payments.getPayment(deps, caller, paymentId, fundsScreening);

/** One payment with its unexpected funds and recoveries (dashboard). */
export const paymentDetail = (deps: Parameters<typeof payments.paymentDetail>[0], caller: Caller, paymentId: string) =>
  payments.paymentDetail(deps, caller, paymentId, fundsScreening);

/** POST /v1/payments/{paymentId}/recover, GraphQL recoverFunds, `cli payments recover`. */
export const recoverFunds = (deps: Parameters<typeof payments.recoverFunds>[0], caller: Caller, paymentId: string, body: unknown) =>
  payments.recoverFunds(deps, caller, paymentId, body, fundsScreening);
