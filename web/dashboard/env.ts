import type { AppDeps, Merchant } from "../../core/deps.js";

/** The signed-in merchant as the dashboard shows it. */
export type DashMerchant = Merchant & { email: string | null };

/**
 * Variables of the dashboard's routes: the dependencies (set by the app that mounts it), the form token of this
 * browser (web/dashboard/csrf.ts) and, behind the session guard, the merchant and its session token.
 */
export type DashEnv = { Variables: { deps: AppDeps; csrf: string; merchant: DashMerchant; session: string } };
