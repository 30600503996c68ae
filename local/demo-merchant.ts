import fs from "node:fs";
import path from "node:path";
import type { AppDeps } from "../core/deps.js";
import { createApiKey, createMerchant, findMerchant, merchantByEmail, setMerchantPassword } from "../modules/merchants/index.js";

/**
 * The demo merchant's dashboard login under `npm start`: printed at start and in the README. The password keeps
 * sign-up's own rules (12 to 200 characters), so the account is one a merchant could have made.
 */
export const DEMO_LOGIN = { email: "demo@example.com", password: "demo-password-1" } as const;
export const DEMO_MERCHANT_NAME = "Demo Merchant";
/** Where `npm start` keeps the demo merchant's API key (the CLI sandbox reads it from there). */
export const demoKeyFile = (dataDir: string) => path.join(dataDir, "demo-api-key");

export type DemoMerchant = { merchantId: string; apiKey: string; email: string; password: string };

/**
 * The demo merchant of `npm start`, made on the first start with DEMO_LOGIN and an API key kept in `dataDir`. On later
 * starts the same account (found by e-mail): its password set back to DEMO_LOGIN's when it differs (earlier starts
 * seeded `demo`, shorter than sign-up's minimum), and a new key when the kept one is
 * missing or no longer this merchant's (a database made afresh under the same data dir, a revoked key).
 *
 * @example
 * const demo = await ensureDemoMerchant(deps, ".data");
 * // { merchantId, apiKey: "cp_live_…", email: "demo@example.com", password: "demo-password-1" }
 */
export async function ensureDemoMerchant(deps: Pick<AppDeps, "db" | "now">, dataDir: string): Promise<DemoMerchant> {
  const { email, password } = DEMO_LOGIN;
  const existing = await merchantByEmail(deps.db, email);
  const merchantId = existing ? existing.id : (await createMerchant(deps.db, { name: DEMO_MERCHANT_NAME, email, password })).id;
  if (existing) await setMerchantPassword(deps.db, merchantId, password);

  const file = demoKeyFile(dataDir);
  const kept = fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim() : undefined;
  const keptOwner = kept ? await findMerchant(deps, { apiKey: kept }) : null;
  let apiKey = kept;
  if (!apiKey || keptOwner?.id !== merchantId) {
    apiKey = (await createApiKey(deps.db, merchantId, "demo")).key;
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, apiKey + "\n", { mode: 0o600 });
  }
  return { merchantId, apiKey, email, password };
}
