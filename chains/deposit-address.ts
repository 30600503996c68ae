import { concat, encodeAbiParameters, getAddress, getContractAddress, keccak256, toBytes, type Address, type Hex } from "viem";

// Deposit addresses are CREATE2 clones (OpenZeppelin `Clones.cloneDeterministic`, plain EIP-1167) of the factory's
// ForwarderWallet implementation. The payout is committed through the CREATE2 salt, keccak256(abi.encode(salt,
// payout)), rather than as a clone argument: 20 bytes less code to deploy per wallet (4,000 gas).
// Everything here is pure: no RPC.

/**
 * The factory's wallet implementation: the factory creates it in its constructor, as its first CREATE
 * (contract nonces start at 1), so it follows from the factory address alone. Equals `factory.implementation()`.
 */
export function implementationAddress(factory: Address): Address {
  return getContractAddress({ from: factory, nonce: 1n });
}

/** Init code of an EIP-1167 clone of `implementation` (OpenZeppelin Clones 5.x layout; the same for every wallet). */
export function walletInitCode(implementation: Address): Hex {
  return concat(["0x3d602d80600a3d3981f3363d3d373d3d3d363d73", implementation, "0x5af43d82803e903d91602b57fd5bf3"]);
}

/** The CREATE2 salt of the wallet of (salt, payout): keccak256(abi.encode(salt, payout)), as `WalletFactory` computes it. */
export function walletCreate2Salt(salt: Hex, payout: Address): Hex {
  return keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "address" }], [salt, payout]));
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
    salt: walletCreate2Salt(opts.salt, getAddress(opts.payout)),
    bytecodeHash: initCodeHash(implementation),
  });
}

// The init code is the same for every wallet of an implementation: hashed once (payment creation computes an address each).
const initCodeHashes = new Map<string, Hex>();
function initCodeHash(implementation: Address): Hex {
  const key = implementation.toLowerCase();
  let hash = initCodeHashes.get(key);
  if (!hash) initCodeHashes.set(key, (hash = keccak256(walletInitCode(getAddress(implementation)))));
  return hash;
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
