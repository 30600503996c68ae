import { maintainEventFeed } from "../modules/events/index.js";
import { defineProcessor } from "./runner.js";

/** Keeps the event feed (GET /v1/events) in order and within its retention (modules/events/retention.ts). */
export function eventFeed() {
  return defineProcessor({ name: "event-feed", intervalMs: 5_000, run: (deps) => maintainEventFeed(deps).then(() => {}) });
}
