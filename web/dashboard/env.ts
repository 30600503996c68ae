import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppDeps, Merchant } from "../../core/deps.js";
import type { DomainError } from "../../core/errors.js";
import type { Agent } from "../../modules/agents/index.js";

/** The signed-in merchant as the dashboard shows it. */
export type DashMerchant = Merchant & { email: string | null };

/** The merchant's Gas Tank when it is below the low-balance alert threshold (the layout's banner), in USDT micros. */
export type LowGasTank = { balanceMicros: bigint; thresholdMicros: bigint };

/**
 * Variables of the dashboard's routes: the dependencies (set by the app that mounts it), the HTTP status of a
 * domain error (the mounting app's one mapping, api/errors.ts), the form token of this browser
 * (web/dashboard/csrf.ts) and, behind the session guard, the merchant, its session token, its Gas Tank
 * when below its alert threshold (null otherwise) and its agent terms (null: not an agent account).
 */
export type DashEnv = {
  Variables: {
    deps: AppDeps;
    statusOf: (e: DomainError) => ContentfulStatusCode;
    csrf: string;
    merchant: DashMerchant;
    session: string;
    lowGasTank: LowGasTank | null;
    agent: Agent | null;
  };
};
