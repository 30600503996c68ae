import type { AppDeps } from "../core/deps.js";
import type { ActiveChain } from "../chains/runtime.js";
import { txSender } from "../chains/tx-sender.js";
import { complete } from "../modules/settlement/index.js";
import { reconcile } from "../modules/settlement/index.js";
import { settleRecoveries } from "../modules/settlement/index.js";
import { reserve } from "../modules/settlement/index.js";
import { settleReturns } from "../modules/sanctions/index.js";
import { send } from "../modules/settlement/index.js";
import { settlerAccount, type SettlerHooks } from "../modules/settlement/index.js";
import { eachChain } from "./each-chain.js";
import { defineProcessor } from "./runner.js";

export type { SettlerHooks };

/**
 * One settlement pass over a chain: reconcile sent transactions, complete indexed sweeps, reserve, send; then fund
 * recoveries and the returns of held funds (signed by the factory owner from the CLI; followed here without its key).
 */
export async function settleChain(deps: AppDeps, chain: ActiveChain, hooks: SettlerHooks = {}) {
  if (!chain.factory) return;
  const sender = txSender({ db: deps.db, chain, client: deps.clients.get(chain.chainId)!, account: settlerAccount(deps) });
  await reconcile(deps, chain, sender);
  await complete(deps, chain);
  await reserve(deps, chain);
  await send(deps, chain, sender, hooks);
  await settleRecoveries(deps, chain, sender, hooks);
  await settleReturns(deps, chain);
}

export function settler(hooks: SettlerHooks = {}) {
  return defineProcessor({
    name: "settler",
    needsIndexer: true,
    intervalMs: (deps) => deps.config.SETTLER_INTERVAL_MS,
    run: (deps) => eachChain(deps, "settler", (chain) => settleChain(deps, chain, hooks)),
  });
}
