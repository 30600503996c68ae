import { agentPayouts } from "./agent-payouts.js";
import { bridgeOrders } from "./bridge-orders.js";
import { detector } from "./detector.js";
import { eventFeed } from "./event-feed.js";
import { expiry } from "./expiry.js";
import { gasTankCredits } from "./gas-tank.js";
import { pricePusher } from "./price-pusher.js";
import type { Processor } from "./runner.js";
import { settler } from "./settler.js";
import { syncPruner } from "./sync-pruner.js";
import { vaultDeposits } from "./vault-deposits.js";
import { vaultSweeper } from "./vault-sweeper.js";
import { webhookDispatcher } from "./webhook-dispatcher.js";

/** Every background processor of the service, in one list (started by `npm start` and by deployments). */
export function allProcessors(): Processor[] {
  return [
    detector(),
    gasTankCredits(),
    settler(),
    expiry(),
    webhookDispatcher(),
    syncPruner(),
    vaultDeposits(),
    vaultSweeper(),
    bridgeOrders(),
    agentPayouts(),
    eventFeed(),
    pricePusher(),
  ];
}
