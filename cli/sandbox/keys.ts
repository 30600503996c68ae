import { createDb } from "../../db/client.js";
import { signingKeysOf } from "../../modules/events/index.js";
import { generateWebhookSecret } from "../../modules/webhooks/index.js";
import { databaseOf, type Target } from "./env.js";

// What `listen` and `resend` sign with, per event kind, first found:
//   1. `--secret` (or CHAINPAY_WEBHOOK_SECRET): one key for every event;
//   2. the merchant's own webhook secret (payment events) and its key's Vault webhook secret (Vault events), read
//      from the database with SECRET_KEY (the local stack's when unset): a receiver verifies exactly as in production;
//   3. a secret made for this session, printed once, for a kind with neither.

export type KeySource = "flag" | "env" | "webhook" | "session";
export type SigningSetup = {
  keys: { payment: string; vault: string };
  sources: { payment: KeySource; vault: KeySource };
  /** Printed when a kind signs with it. */
  sessionSecret?: string;
  /** Why the configured secrets could not be read, if they could not. */
  warning?: string;
};

export async function signingSetup(
  flags: { secret?: string },
  target: Target,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SigningSetup> {
  const given = flags.secret ?? env.CHAINPAY_WEBHOOK_SECRET;
  if (given) {
    const source: KeySource = flags.secret ? "flag" : "env";
    return { keys: { payment: given, vault: given }, sources: { payment: source, vault: source } };
  }
  let configured: { payment: string | null; vault: string | null } = { payment: null, vault: null };
  let warning: string | undefined;
  const database = databaseOf(env);
  if (database) {
    const db = createDb({ url: database.url, max: 1 });
    try {
      configured = await signingKeysOf({ db, config: database.config }, target.apiKey);
    } catch (e) {
      warning = `the webhook secrets could not be read (${(e as Error).message}): signing with a session secret`;
    } finally {
      await db.close();
    }
  } else warning = "no database (DATABASE_URL) to read the webhook secrets from: signing with a session secret";
  const session = configured.payment && configured.vault ? undefined : generateWebhookSecret();
  return {
    keys: { payment: configured.payment ?? session!, vault: configured.vault ?? session! },
    sources: { payment: configured.payment ? "webhook" : "session", vault: configured.vault ? "webhook" : "session" },
    ...(session ? { sessionSecret: session } : {}),
    ...(warning ? { warning } : {}),
  };
}
