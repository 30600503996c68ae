import type { AppDeps, Merchant } from "../core/deps.js";

/** Hono's variables: the dependencies, and on key-authenticated routes the merchant and its key. */
export type AppEnv = { Variables: { deps: AppDeps; merchant: Merchant; apiKey?: string } };
