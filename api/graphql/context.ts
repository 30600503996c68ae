import type { AppDeps } from "../../core/deps.js";
import type { Caller } from "../../modules/merchants/index.js";

/** Per request: the deps, who is asking (one caller, so its key is looked up once), and from where. */
export type GraphqlContext = {
  deps: AppDeps;
  apiKey: string | undefined;
  clientIp: string;
  caller: Caller;
};

export function graphqlContext(deps: AppDeps, apiKey: string | undefined, clientIp: string): GraphqlContext {
  return { deps, apiKey, clientIp, caller: { apiKey } };
}
