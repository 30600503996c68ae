import { creditGasTankDeposits } from "../modules/gas-tank/gas-tank.js";
import type { Processor } from "./runner.js";

/** Credits USDT sent to Gas Tank deposit addresses once it is GAS_TANK_CONFIRMATIONS deep (default 3). */
export const gasTankCredits: Processor = {
  name: "gas-tank",
    needsIndexer: true,
  intervalMs: 1000,
  async run(deps) {
    const confirmations = Number(process.env.GAS_TANK_CONFIRMATIONS ?? 3);
    for (const chain of deps.chains) {
      const latest = await deps.clients.get(chain.chainId)!.getBlockNumber({ cacheTime: 0 });
      await creditGasTankDeposits(deps, chain, latest, confirmations);
    }
  },
};
