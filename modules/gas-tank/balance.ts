import type { AppDeps } from "../../core/deps.js";
import { authenticate, type Caller } from "../merchants/index.js";
import { gasTankView } from "./view.js";

/** GET /balance and GraphQL `balance`: the caller's Gas Tank. Throws Unauthorized. */
export async function getBalance(deps: AppDeps, caller: Caller) {
  return gasTankView(deps, (await authenticate(deps, caller)).id);
}
