import { creditConfirmedDeposits } from "../modules/gas-tank/index.js";
import { defineProcessor } from "./runner.js";

/** Credits USDT sent to Gas Tank deposit addresses once it is GAS_TANK_CONFIRMATIONS deep (modules/gas-tank/credit.ts). */
export function gasTankCredits() {
  return defineProcessor({
    name: "gas-tank",
    needsIndexer: true,
    intervalMs: 1000,
    run: (deps) => creditConfirmedDeposits(deps).then(() => {}),
  });
}
