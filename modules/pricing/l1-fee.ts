import { parseAbi, serializeTransaction, type Address, type PublicClient } from "viem";
import { encodeSweep } from "../../chains/factory-calls.js";
import { GAS_PRICE_ORACLE } from "../../chains/registry.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { scopedCache } from "../../core/ttl-cache.js";
import { GAS_PRICE_TTL_MS } from "./gas-price.js";

const gasPriceOracleAbi = parseAbi(["function getL1Fee(bytes _data) view returns (uint256)"]);

const l1Fees = scopedCache<{ wei: bigint }>(1);

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
    data: encodeSweep([{ salt: `0x${"22".repeat(32)}`, payout: any, token: any, fee: 10n ** 18n, feeRecipient: any }]),
  });
}

/**
 * The L1 data fee (wei) of one sweep on an OP-stack chain (`GasPriceOracle.getL1Fee` of sampleSweepTx), read at most
 * once per `ttlMs` per client like the gas price; 0 on any other chain. Added to the gas fee of quotes, and so to
 * the Gas Tank fee a gasless payment is charged.
 *
 * @example
 * const wei = await cachedL1DataFee(deps.clients.get(8453)!, chain); // e.g. 1_234_567_890n
 */
export async function cachedL1DataFee(
  client: PublicClient,
  chain: Pick<ActiveChain, "chainId" | "factory" | "l1DataFee">,
  ttlMs = GAS_PRICE_TTL_MS,
): Promise<bigint> {
  if (chain.l1DataFee !== "op-stack") return 0n;
  const entry = await l1Fees(client, ttlMs).get("l1Fee", async () => ({
    wei: await client.readContract({
      address: GAS_PRICE_ORACLE,
      abi: gasPriceOracleAbi,
      functionName: "getL1Fee",
      args: [sampleSweepTx(chain)],
    }),
  }));
  return entry!.wei;
}
