import { encodeFunctionData, type Hex } from "viem";
import { walletFactoryAbi } from "../abis/WalletFactory.js";

/** One wallet to deploy (if needed) and sweep: the whole balance of `token` to `payout`, `fee` of it to `feeRecipient`. */
export type SweepRequest = { salt: Hex; payout: Hex; token: Hex; fee: bigint; feeRecipient: Hex };

/**
 * Calldata for the factory: `deployAndSweep` for one wallet, the atomic `deployAndSweepBatch` for several.
 *
 * @example
 * const data = encodeSweep([{ salt, payout, token, fee: 0n, feeRecipient: zeroAddress }]);
 */
export function encodeSweep(requests: readonly SweepRequest[]): Hex {
  if (requests.length === 1) {
    const r = requests[0]!;
    return encodeFunctionData({
      abi: walletFactoryAbi,
      functionName: "deployAndSweep",
      args: [r.salt, r.payout, r.token, r.fee, r.feeRecipient],
    });
  }
  return encodeFunctionData({ abi: walletFactoryAbi, functionName: "deployAndSweepBatch", args: [requests] });
}
