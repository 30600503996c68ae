import { concat, getAddress, getContractAddress, keccak256, toBytes, type Address, type Hex } from "viem";

// Deposit addresses are CREATE2 clones (OpenZeppelin `Clones.cloneDeterministicWithImmutableArgs`) of the
// factory's ForwarderWallet implementation, with the payout address as the clone's only immutable argument.
// Everything here is pure: no RPC.

/**
 * The factory's wallet implementation: the factory creates it in its constructor, as its first CREATE
 * (contract nonces start at 1), so it follows from the factory address alone. Equals `factory.implementation()`.
 */
export function implementationAddress(factory: Address): Address {
  return getContractAddress({ from: factory, nonce: 1n });
}

/** Init code of a clone of `implementation` whose immutable argument is `payout` (OpenZeppelin Clones 5.x layout). */
export function walletInitCode(implementation: Address, payout: Address): Hex {
  return concat([
    "0x6100413d81600a3d39f3363d3d373d3d3d363d73", // PUSH2 0x0041 (45-byte proxy + 20-byte arg), copy-and-return, proxy up to PUSH20
    implementation,
    "0x5af43d82803e903d91602b57fd5bf3",
    payout,
  ]);
}

/**
 * The deposit address of (salt, payout) under `factory`; equals `WalletFactory.computeAddress(salt, payout)`.
 * `implementation` defaults to `implementationAddress(factory)`; pass the value read from the factory to avoid relying on that.
 */
export function computeWalletAddress(opts: { factory: Address; implementation?: Address; salt: Hex; payout: Address }): Address {
  const implementation = opts.implementation ?? implementationAddress(opts.factory);
  return getContractAddress({
    opcode: "CREATE2",
    from: opts.factory,
    salt: opts.salt,
    bytecode: walletInitCode(getAddress(implementation), getAddress(opts.payout)),
  });
}

/** Salt of a payment's deposit address. */
export function paymentSalt(paymentId: string): Hex {
  return keccak256(toBytes(`chainpay:payment:${paymentId}`));
}

/** Salt of a Vault deposit address: the same (userId, business wallet) gives the same address for every token. */
export function vaultSalt(externalUserId: string, businessWallet: Address): Hex {
  const userHash = keccak256(toBytes(externalUserId));
  return keccak256(toBytes(`chainpay:vault:${userHash}:${businessWallet.toLowerCase()}`));
}

/** Salt of a merchant's Gas Tank deposit address. */
export function gasTankSalt(merchantId: string): Hex {
  return keccak256(toBytes(`chainpay:gas-tank:${merchantId}`));
}
