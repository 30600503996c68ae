import { parseAbi, serializeTransaction, type Address, type PublicClient } from "viem";
import { encodeSweep } from "../../chains/factory-calls.js";
import { ARBITRUM_NODE_INTERFACE, GAS_PRICE_ORACLE } from "../../chains/registry.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { scopedCache } from "../../core/ttl-cache.js";
import { GAS_PRICE_TTL_MS } from "./gas-price.js";

const gasPriceOracleAbi = parseAbi(["function getL1Fee(bytes _data) view returns (uint256)"]);
const nodeInterfaceAbi = parseAbi([
  "function gasEstimateL1Component(address to, bool contractCreation, bytes data) payable returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate)",
]);

/** What one sweep pays for its L1 data: a fee in wei (OP stack), or L2 gas on top of its own (Arbitrum). */
export type L1Cost = { feeWei: bigint; gasUnits: bigint };
const NONE: L1Cost = { feeWei: 0n, gasUnits: 0n };
const l1Costs = scopedCache<L1Cost>(1);

/**
 * The unsigned bytes of one wallet's sweep on `chain` (what a payment's settlement costs on L1): a
 * `deployAndSweep` of the factory with every argument non-zero, its gas limit and fees at realistic widths.
 */
export function sampleSweepTx(chain: Pick<ActiveChain, "chainId" | "factory">) {
  const any = "0x1111111111111111111111111111111111111111" as Address;
  return serializeTransaction({
    chainId: chain.chainId,
    type: "eip1559",
    nonce: 100_000,
    to: chain.factory ?? any,
    gas: 300_000n,
    maxFeePerGas: 10_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    data: sampleSweepData(),
  });
}

/** The calldata of one wallet's `deployAndSweep`, every argument non-zero (what its bytes cost on L1). */
function sampleSweepData() {
  const any = "0x1111111111111111111111111111111111111111" as Address;
  return encodeSweep([{ salt: `0x${"22".repeat(32)}`, payout: any, token: any, fee: 10n ** 18n, feeRecipient: any }]);
}

/**
 * What one sweep pays for its L1 data, read at most once per `ttlMs` per client like the gas price: on an OP-stack
 * chain `GasPriceOracle.getL1Fee` of sampleSweepTx (wei, on top of L2 gas); on Arbitrum `NodeInterface.
 * gasEstimateL1Component` of the same call (L2 gas, what eth_estimateGas would add); nothing elsewhere. Quotes add it
 * to the sweep's gas, so the gas fee and a Gas Tank payment's fee include it.
 *
 * @example
 * const { feeWei, gasUnits } = await cachedL1Cost(deps.clients.get(8453)!, chain); // { feeWei: 67_961_088_741n, gasUnits: 0n }
 */
export async function cachedL1Cost(
  client: PublicClient,
  chain: Pick<ActiveChain, "chainId" | "factory" | "l1DataFee">,
  ttlMs = GAS_PRICE_TTL_MS,
): Promise<L1Cost> {
  if (!chain.l1DataFee) return NONE;
  const kind = chain.l1DataFee;
  const entry = await l1Costs(client, ttlMs).get("l1", async () => {
    if (kind === "op-stack")
      return {
        feeWei: await client.readContract({
          address: GAS_PRICE_ORACLE,
          abi: gasPriceOracleAbi,
          functionName: "getL1Fee",
          args: [sampleSweepTx(chain)],
        }),
        gasUnits: 0n,
      };
    const { result } = await client.simulateContract({
      address: ARBITRUM_NODE_INTERFACE,
      abi: nodeInterfaceAbi,
      functionName: "gasEstimateL1Component",
      args: [chain.factory ?? ARBITRUM_NODE_INTERFACE, false, sampleSweepData()],
    });
    return { feeWei: 0n, gasUnits: result[0] };
  });
  return entry!;
}
