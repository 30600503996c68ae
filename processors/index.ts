import type { Processor } from "./runner.js";

/** Every background processor of the service, in one list (started by `npm start` and by deployments). */
export function allProcessors(): Processor[] {
  return [];
}
