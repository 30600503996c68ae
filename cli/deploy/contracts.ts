import { concat, encodeAbiParameters, getContractAddress, keccak256, toBytes, type Address, type Hex } from "viem";
import { priceOracleAbi, priceOracleBytecode, priceOracleRuntime } from "../../abis/PriceOracle.js";
import { walletFactoryAbi, walletFactoryBytecode } from "../../abis/WalletFactory.js";
import { expectedFactoryCode } from "../../chains/factory-code.js";

// What `deploy` places on a chain, and where: every contract through the canonical CREATE2 deployment proxy
// (Arachnid's deterministic-deployment-proxy, at the same address on every public chain, built into Anvil), so one
// deployer and settler give one factory address on every chain, and the implementation the factory creates (its first
// CREATE) one address too. Recovery of funds sent on the wrong chain depends on it: a deposit address is the same
// on every chain with the same factory.

/** The deterministic deployment proxy: calldata = salt (32 bytes) ++ init code; CREATE2s it and returns the address. */
export const CREATE2_DEPLOYER: Address = "0x4e59b44847b379578588920ca78fbf26c0b4956c";
/** Its runtime code (github.com/Arachnid/deterministic-deployment-proxy), as Anvil places it and public chains hold it. */
export const CREATE2_DEPLOYER_CODE: Hex =
  "0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3";
/** The salt of this release's contracts: a new one gives new addresses (a factory of another release). */
export const DEPLOY_SALT: Hex = keccak256(toBytes("chainpay:contracts:v1"));

export type Create2Contract = {
  name: "WalletFactory" | "PriceOracle";
  address: Address;
  /** salt ++ init code: the proxy's calldata. */
  calldata: Hex;
  /** keccak256 of the runtime code this init code leaves at `address`. */
  codeHash: Hex;
};

function create2(name: Create2Contract["name"], bytecode: Hex, args: Hex, codeHashAt: (address: Address) => Hex): Create2Contract {
  const initCode = concat([bytecode, args]);
  const address = getContractAddress({ opcode: "CREATE2", from: CREATE2_DEPLOYER, salt: DEPLOY_SALT, bytecode: initCode });
  return { name, address, calldata: concat([DEPLOY_SALT, initCode]), codeHash: codeHashAt(address) };
}

/**
 * The factory of (deployer, settler): the deployer is its first owner (it allow-lists the fee recipient, then hands the
 * factory to the owner), the settler its first settler. Its implementation is its own first CREATE.
 *
 * @example
 * const { factory, implementation } = factoryOf("0xDe…", "0x5e…"); // the same addresses on every chain
 */
export function factoryOf(deployer: Address, settler: Address) {
  const args = encodeAbiParameters(walletFactoryAbi.find((x) => x.type === "constructor")!.inputs, [deployer, settler]);
  const factory = create2("WalletFactory", walletFactoryBytecode, args, (a) => expectedFactoryCode(a).factoryCodeHash);
  const expected = expectedFactoryCode(factory.address);
  return {
    factory,
    implementation: { name: "ForwarderWallet" as const, address: expected.implementation, codeHash: expected.implementationCodeHash },
  };
}

/** Our PriceOracle, first owned by the deployer (who hands it to the price pusher's key or the owner). */
export function oracleOf(deployer: Address): Create2Contract {
  const args = encodeAbiParameters(priceOracleAbi.find((x) => x.type === "constructor")!.inputs, [deployer]);
  return create2("PriceOracle", priceOracleBytecode, args, () => keccak256(priceOracleRuntime.code));
}
