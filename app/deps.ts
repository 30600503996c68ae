import { chainClients } from "../chains/clients.js";
import { activeChains } from "../chains/runtime.js";
import { loadConfig, type Config } from "../core/config.js";
import { observeRpc } from "../core/metrics.js";
import type { AppDeps } from "../core/deps.js";
import { createDb } from "../db/client.js";

/** Builds the dependencies of the API and processors from the environment. */
export function createDeps(opts: { env?: Record<string, string | undefined>; config?: Config; now?: () => number } = {}): AppDeps {
  const env = opts.env ?? process.env;
  const config = opts.config ?? loadConfig(env);
  if (!config.DATABASE_URL) throw new Error("DATABASE_URL is not set");
  const chains = activeChains(env);
  const rpc = chainClients(chains, {
    observer: { request: observeRpc },
    maxLagBlocks: config.RPC_MAX_LAG_BLOCKS,
    timeoutMs: config.RPC_TIMEOUT_MS,
  });
  return {
    db: createDb({
      url: config.DATABASE_URL,
      schema: config.APP_SCHEMA,
      viewsSchema: config.PONDER_VIEWS_SCHEMA,
      max: config.DATABASE_POOL_SIZE,
    }),
    config,
    chains,
    clients: rpc.clients,
    rpcPools: rpc.pools,
    now: opts.now ?? Date.now,
  };
}
