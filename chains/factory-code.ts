import { getContractAddress, keccak256, pad, toBytes, type Address, type Hex } from "viem";
import { forwarderWalletRuntime } from "../abis/ForwarderWallet.js";
import { walletFactoryRuntime } from "../abis/WalletFactory.js";

/** Runtime code with each 32-byte immutable at its offsets set to `value` (an address, left-padded). */
export function withImmutables(runtime: { code: Hex; immutables: readonly number[] }, value: Address): Hex {
  const bytes = toBytes(runtime.code);
  const word = toBytes(pad(value, { size: 32 }));
  for (const at of runtime.immutables) bytes.set(word, at);
  return `0x${Buffer.from(bytes).toString("hex")}`;
}

/**
 * What this release's factory at `factory` runs: its implementation (the factory's first CREATE, nonce 1) and the
 * code hashes of both, immutables filled in (the factory's holds the implementation's address, the implementation's
 * the factory's). `deploy` and `doctor` compare them with what the chain holds.
 *
 * @example
 * const { implementation, factoryCodeHash } = expectedFactoryCode(chain.factory!);
 * if (keccak256(await client.getCode({ address: chain.factory! })) !== factoryCodeHash) throw new Error("another release's factory");
 */
export function expectedFactoryCode(factory: Address) {
  const implementation = getContractAddress({ from: factory, nonce: 1n });
  return {
    implementation,
    factoryCodeHash: keccak256(withImmutables(walletFactoryRuntime, implementation)),
    implementationCodeHash: keccak256(withImmutables(forwarderWalletRuntime, factory)),
  };
}
