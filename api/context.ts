import type { AppDeps, Merchant } from "../core/deps.js";
import type { Logger } from "../core/log.js";

/**
 * Hono's variables: the dependencies, the request's id and logger (api/middleware/observe.ts), and on key-authenticated
 * routes the merchant and its key.
 */
export type AppEnv = { Variables: { deps: AppDeps; requestId: string; log: Logger; merchant: Merchant; apiKey?: string } };
