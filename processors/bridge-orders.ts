import { runBridgeOrders } from "../modules/bridge/index.js";
import { defineProcessor } from "./runner.js";

/** Follows cross-chain orders at the provider and cancels those left unfilled for 5 minutes (modules/bridge/poll.ts). */
export function bridgeOrders() {
  return defineProcessor({
    name: "bridge-orders",
    intervalMs: (deps) => deps.config.BRIDGE_POLL_INTERVAL_MS,
    run: (deps) => runBridgeOrders(deps).then(() => {}),
  });
}
