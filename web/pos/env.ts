import type { AppDeps } from "../../core/deps.js";

/**
 * Variables of the POS pages: the dependencies (set by the app that mounts them) and the form token of this browser
 * (web/dashboard/csrf.ts, the same signed double-submit token the dashboard uses).
 */
export type PosEnv = { Variables: { deps: AppDeps; csrf: string } };
