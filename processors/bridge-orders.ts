import { runBridgeOrders } from "../flows/bridge-orders.js";
import { defineProcessor } from "./runner.js";

/** Follows cross-chain orders at the provider and cancels those left unfilled for 5 minutes (modules/bridge/poll.ts, flows/bridge-orders.ts). */
export function bridgeOrders() {
  return defineProcessor({
    name: "bridge-orders",
    intervalMs: (deps) => deps.config.BRIDGE_POLL_INTERVAL_MS,
    run: (deps) => runBridgeOrders(deps).then(() => {}),
  });
}
