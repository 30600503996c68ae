import { keccak256, toBytes, type Address, type PublicClient } from "viem";
import { walletFactoryAbi } from "../abis/WalletFactory.js";
import { computeWalletAddress } from "./deposit-address.js";

const PROBE_SALT = keccak256(toBytes("chainpay:factory-check"));
const PROBE_PAYOUT: Address = "0x000000000000000000000000000000000000dEaD";

/**
 * Whether `factory` derives deposit addresses as chains/deposit-address.ts does: the payout in the CREATE2 salt. A
 * factory of an earlier release (the payout as a clone argument) gives other addresses, which it could never deploy
 * or sweep: a payer's funds sent there would be lost. Returns null when they agree, else why not. RPC errors throw.
 *
 * @example
 * const problem = await factoryMismatch(client, chain.factory!, chain.implementation);
 */
export async function factoryMismatch(client: PublicClient, factory: Address, implementation?: Address): Promise<string | null> {
  const theirs = await client.readContract({
    address: factory,
    abi: walletFactoryAbi,
    functionName: "computeAddress",
    args: [PROBE_SALT, PROBE_PAYOUT],
  });
  const ours = computeWalletAddress({ factory, implementation, salt: PROBE_SALT, payout: PROBE_PAYOUT });
  if (theirs.toLowerCase() === ours.toLowerCase()) return null;
  return `the factory ${factory} derives ${theirs} for a probe where this release derives ${ours}: it is a factory of another release (docs/operations.md, "Upgrading the factory")`;
}
