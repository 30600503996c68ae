import {
  BaseError,
  decodeErrorResult,
  encodeFunctionData,
  ExecutionRevertedError,
  getAddress,
  isHex,
  keccak256,
  toBytes,
  zeroAddress,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
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

/**
 * Whether `factory` has `returnFunds` (the owner returning held funds, `sanctions return`): an `eth_call` of it from a
 * random address, which a factory with the function refuses with `OwnableUnauthorizedAccount(that address)`. A factory
 * of an earlier release has no such function and reverts with no data (no fallback): false, as for any other revert
 * or an address without code (the call succeeds). Nothing is sent. RPC errors (not a revert) throw.
 *
 * @example
 * if (!(await factorySupportsReturn(client, chain.factory!))) throw new Error("this factory cannot return funds: upgrade it");
 */
export async function factorySupportsReturn(client: PublicClient, factory: Address): Promise<boolean> {
  const account = privateKeyToAddress(generatePrivateKey());
  const data = encodeFunctionData({
    abi: walletFactoryAbi,
    functionName: "returnFunds",
    args: [PROBE_SALT, PROBE_PAYOUT, zeroAddress, PROBE_PAYOUT, 1n],
  });
  try {
    await client.call({ account, to: factory, data });
    return false;
  } catch (e) {
    if (!(e instanceof BaseError) || !e.walk((x) => x instanceof ExecutionRevertedError)) throw e;
    const revert = revertData(e);
    if (!revert || revert === "0x") return false;
    try {
      const decoded = decodeErrorResult({ abi: walletFactoryAbi, data: revert });
      return decoded.errorName === "OwnableUnauthorizedAccount" && getAddress(decoded.args[0]) === account;
    } catch {
      return false;
    }
  }
}

/** The revert data an RPC error carries (`data`, or `data.data` for some nodes), if any. */
function revertData(e: BaseError): Hex | undefined {
  let found: Hex | undefined;
  e.walk((x) => {
    const d = (x as { data?: unknown }).data;
    const hex = typeof d === "object" && d !== null ? (d as { data?: unknown }).data : d;
    if (typeof hex === "string" && isHex(hex)) found ??= hex;
    return false;
  });
  return found;
}
