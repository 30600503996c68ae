import type { AppDeps } from "../api/context.js";
import { activeChains } from "../chains/runtime.js";
import { createDb } from "../db/client.js";
import { publicClients } from "./clients.js";
import { loadConfig, type Config } from "./config.js";

/** Builds the dependencies of the API and processors from the environment. */
export function createDeps(opts: { env?: Record<string, string | undefined>; config?: Config; now?: () => number } = {}): AppDeps {
  const env = opts.env ?? process.env;
  const config = opts.config ?? loadConfig(env);
  if (!config.DATABASE_URL) throw new Error("DATABASE_URL is not set");
  const chains = activeChains(env);
  return {
    db: createDb({ url: config.DATABASE_URL, schema: config.APP_SCHEMA, viewsSchema: config.PONDER_VIEWS_SCHEMA }),
    config,
    chains,
    clients: publicClients(chains),
    now: opts.now ?? Date.now,
  };
}
