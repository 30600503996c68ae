import { txSender, type BroadcastHooks } from "../chains/tx-sender.js";
import { settlerAccount } from "../modules/settlement/index.js";
import { sweepVaultChain } from "../modules/vault/index.js";
import { vaultScreening } from "../flows/vault-screening.js";
import { eachChain } from "./each-chain.js";
import { defineProcessor } from "./runner.js";

/** Sweeps vault deposits to the businesses' wallets through the settler key (modules/vault/sweep.ts). */
export function vaultSweeper(hooks: BroadcastHooks = {}) {
  return defineProcessor({
    name: "vault-sweeper",
    needsIndexer: true,
    intervalMs: (deps) => deps.config.SETTLER_INTERVAL_MS,
    run: (deps) =>
      eachChain(deps, "vault-sweeper", async (chain) => {
        if (!chain.factory) return;
        const sender = txSender({ db: deps.db, chain, client: deps.clients.get(chain.chainId)!, account: settlerAccount(deps) });
        await sweepVaultChain(deps, chain, sender, vaultScreening, hooks);
      }),
  });
}
