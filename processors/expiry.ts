import { expirePayments } from "../modules/payments/index.js";
import { defineProcessor } from "./runner.js";

/** Expires unpaid payments (modules/payments/expire.ts); runs every minute (spec). */
export function expiry() {
  return defineProcessor({ name: "expiry", intervalMs: 60_000, needsIndexer: true, run: (deps) => expirePayments(deps).then(() => {}) });
}
