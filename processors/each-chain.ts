import type { ActiveChain } from "../chains/runtime.js";
import type { AppDeps } from "../core/deps.js";
import { firstLine, logger } from "../core/log.js";

/**
 * Runs a processor's work for every chain at once, each on its own: one chain's failure or slowness (an RPC error or
 * hang, a refused broadcast, a stuck nonce) neither stops nor delays another's. The pass then fails naming the chains
 * that failed, so the runner counts it and health shows it.
 *
 * @example run: (deps) => eachChain(deps, "settler", (chain) => settleChain(deps, chain))
 */
export async function eachChain(deps: Pick<AppDeps, "chains">, processor: string, work: (chain: ActiveChain) => Promise<unknown>) {
  const results = await Promise.allSettled(deps.chains.map((chain) => work(chain)));
  const failed = results.flatMap((r, i) => {
    if (r.status === "fulfilled") return [];
    const chainId = deps.chains[i]!.chainId;
    logger(processor).error({ chainId, err: r.reason }, "pass failed on this chain; the other chains went on");
    return [`chain ${chainId}: ${firstLine(r.reason)}`];
  });
  if (failed.length) throw new Error(failed.join("; "));
}
