import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";

/**
 * Gas one payment of a settlement batch takes at worst: a fresh wallet deployed and swept, paid to a merchant no other
 * payment of the batch pays and who holds nothing yet (a first balance, or a new account for the native coin).
 * bench/sweep-gas.ts measures it and fails above this: 84k (ERC-20) to 95k (native coin) on Anvil (Prague rules).
 * A typical batch of 50 (ERC-20, 5 merchants) takes 59k per payment.
 */
export const SWEEP_GAS_PER_PAYMENT_BOUND = 100_000n;

/** The most gas one transaction may use since Osaka (EIP-7825), whatever the block gas limit. */
export const TX_GAS_CAP = 16_777_216n;

/**
 * How many payments one settlement transaction takes: as many as fit, at the worst-case gas per payment, in a third of
 * the block gas limit (and the transaction gas cap), capped by SETTLEMENT_MAX_BATCH; at least one. The gas price is
 * deliberately no input (docs/operations.md, "Settlement batch size").
 */
export function settlementBatchSize(blockGasLimit: bigint, maxBatch: number): number {
  const budget = blockGasLimit / 3n < TX_GAS_CAP ? blockGasLimit / 3n : TX_GAS_CAP;
  return Math.max(1, Math.min(maxBatch, Number(budget / SWEEP_GAS_PER_PAYMENT_BOUND)));
}

/** A chain's block gas limit changes slowly: read at most once a minute per chain and process. */
const GAS_LIMIT_TTL_MS = 60_000;
const gasLimits = new Map<number, { value: bigint; at: number }>();

/** The batch size for `chain` now (one `eth_getBlockByNumber` a minute). */
export async function batchSizeFor(deps: Pick<AppDeps, "clients" | "config">, chain: Pick<ActiveChain, "chainId">): Promise<number> {
  const max = deps.config.SETTLEMENT_MAX_BATCH;
  const cached = gasLimits.get(chain.chainId);
  let limit = cached && Date.now() - cached.at < GAS_LIMIT_TTL_MS ? cached.value : undefined;
  if (limit === undefined) {
    try {
      limit = (await deps.clients.get(chain.chainId)!.getBlock({ blockTag: "latest" })).gasLimit;
      gasLimits.set(chain.chainId, { value: limit, at: Date.now() });
    } catch (e) {
      // An RPC hiccup: the last known limit will do (it changes slowly); with none, the pass fails and retries.
      if (!cached) throw e;
      limit = cached.value;
    }
  }
  return settlementBatchSize(limit, max);
}
