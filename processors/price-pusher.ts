import { privateKeyToAccount, type LocalAccount } from "viem/accounts";
import type { Hex } from "viem";
import { txSender } from "../chains/tx-sender.js";
import { pushOraclePrices } from "../modules/pricing/index.js";
import { eachChain } from "./each-chain.js";
import { defineProcessor } from "./runner.js";

/**
 * Keeps each served chain's own PriceOracle fresh (modules/pricing/pusher.ts), signing with PRICE_PUSHER_PRIVATE_KEY,
 * the oracles' owner. Without that key it has nothing to do: the oracle's prices are the operator's to set.
 */
export function pricePusher() {
  let account: LocalAccount | undefined;
  return defineProcessor({
    name: "price-pusher",
    intervalMs: (deps) => deps.config.PRICE_PUSHER_INTERVAL_MS,
    async run(deps) {
      const key = deps.config.PRICE_PUSHER_PRIVATE_KEY;
      if (!key) return;
      account ??= privateKeyToAccount(key as Hex);
      const signer = account;
      await eachChain(deps, "price-pusher", async (chain) => {
        const client = deps.clients.get(chain.chainId);
        if (!chain.oracle || !client) return;
        await pushOraclePrices(deps, chain, txSender({ db: deps.db, chain, client, account: signer }));
      });
    },
  });
}
