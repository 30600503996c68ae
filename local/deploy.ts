import {
  createPublicClient,
  createWalletClient,
  getContractAddress,
  http,
  parseUnits,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { bridgeDestinationAbi, bridgeDestinationBytecode } from "../abis/BridgeDestination.js";
import { bridgeSourceAbi, bridgeSourceBytecode } from "../abis/BridgeSource.js";
import { gasPriceOracleStandInBytecode } from "../abis/GasPriceOracleStandIn.js";
import { multicall3Bytecode } from "../abis/Multicall3.js";
import { nodeInterfaceStandInBytecode } from "../abis/NodeInterfaceStandIn.js";
import { priceOracleAbi, priceOracleBytecode } from "../abis/PriceOracle.js";
import { sanctionsOracleAbi, sanctionsOracleBytecode } from "../abis/SanctionsOracle.js";
import { testTokenAbi, testTokenBytecode } from "../abis/TestToken.js";
import { tetherTokenAbi, tetherTokenBytecode } from "../abis/TetherToken.js";
import { walletFactoryAbi, walletFactoryBytecode } from "../abis/WalletFactory.js";
import { ARBITRUM_NODE_INTERFACE, chainInfo, GAS_PRICE_ORACLE, MULTICALL3_ADDRESS, SERVICE_TOKEN_SYMBOL } from "../chains/registry.js";
import type { ChainDeployment } from "../chains/runtime.js";
import { LOCAL_ROLES } from "./accounts.js";

/** USD prices the local oracle starts with (18 decimals on chain). */
export const LOCAL_PRICES: Record<string, string> = {
  ETH: "3000",
  BNB: "600",
  MATIC: "0.5",
  USDT: "1",
  USDC: "1",
  XRP: "0.5",
  TRX: "0.25",
  [SERVICE_TOKEN_SYMBOL]: "0.05",
};

/**
 * Multicall3 at its canonical address, as on public chains (viem and the detector find it there):
 * its runtime code is what its creation code returns. A fork already has it.
 */
async function placeMulticall3(pub: PublicClient): Promise<Address> {
  if ((await pub.getCode({ address: MULTICALL3_ADDRESS }))?.length) return MULTICALL3_ADDRESS;
  const { data } = await pub.call({ data: multicall3Bytecode });
  if (!data || data.length < 4) throw new Error("local deployment: Multicall3 creation code returned nothing");
  await pub.request({ method: "anvil_setCode" as any, params: [MULTICALL3_ADDRESS, data] as any });
  return MULTICALL3_ADDRESS;
}

/**
 * A system contract of the chain (an OP-stack chain's GasPriceOracle, Arbitrum's NodeInterface: the L1 data cost,
 * modules/pricing/l1-fee.ts): its stand-in's runtime code at its address, as Multicall3 is placed.
 */
async function placeCode(pub: PublicClient, address: Address, creationCode: Hex): Promise<void> {
  if ((await pub.getCode({ address }))?.length) return;
  const { data } = await pub.call({ data: creationCode });
  if (!data || data.length < 4) throw new Error(`local deployment: the stand-in for ${address} returned no code`);
  await pub.request({ method: "anvil_setCode" as any, params: [address, data] as any });
}

/**
 * What the real chain of `chainId` already holds, placed on a local one: Multicall3 at its canonical address, and the
 * system contract its L1 data fee is read from (Base's GasPriceOracle, Arbitrum's NodeInterface: stand-ins). Returns
 * Multicall3's address.
 */
export async function placeChainPredeploys(pub: PublicClient, chainId: number): Promise<Address> {
  const info = chainInfo(chainId);
  const multicall3 = await placeMulticall3(pub);
  if (info?.l1DataFee === "op-stack") await placeCode(pub, GAS_PRICE_ORACLE, gasPriceOracleStandInBytecode);
  if (info?.l1DataFee === "arbitrum") await placeCode(pub, ARBITRUM_NODE_INTERFACE, nodeInterfaceStandInBytecode);
  return multicall3;
}

/**
 * Deploys the factory, oracle, the chain's registry tokens, the bridge and the sanctions oracle on a fresh local chain,
 * and places Multicall3.
 * Addresses are deterministic: they follow from the deployer's nonces on a fresh chain.
 */
export async function deployLocalChain(opts: {
  chainId: number;
  rpcUrl: string;
  extraTokens?: { symbol: string; decimals: number }[];
}): Promise<ChainDeployment> {
  const info = chainInfo(opts.chainId);
  if (!info) throw new Error(`chain ${opts.chainId} is not in the registry`);
  const transport = http(opts.rpcUrl);
  const chain = {
    id: opts.chainId,
    name: info.name,
    nativeCurrency: { name: "ETH", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [opts.rpcUrl] } },
  };
  const pub = createPublicClient({ chain, transport });
  const wallet = createWalletClient({ chain, transport, account: LOCAL_ROLES.deployer });

  // Every transaction is sent at once with explicit nonces (addresses follow from them), then
  // awaited together: a few blocks whatever the chain's block time.
  let nonce = await pub.getTransactionCount({ address: LOCAL_ROLES.deployer.address, blockTag: "pending" });
  const sent: { what: string; hash: Hex }[] = [];
  const deploy = async (what: string, abi: Abi, bytecode: Hex, args: unknown[]): Promise<Address> => {
    const n = nonce++;
    sent.push({ what, hash: await wallet.deployContract({ abi, bytecode, args, nonce: n, gas: 8_000_000n } as any) });
    return getContractAddress({ from: LOCAL_ROLES.deployer.address, nonce: BigInt(n) });
  };
  const write = async (what: string, address: Address, abi: Abi, functionName: string, args: unknown[]) => {
    sent.push({ what, hash: await wallet.writeContract({ address, abi, functionName, args, nonce: nonce++, gas: 1_000_000n } as any) });
  };

  const factory = await deploy("WalletFactory", walletFactoryAbi as Abi, walletFactoryBytecode, [
    LOCAL_ROLES.deployer.address,
    LOCAL_ROLES.settler.address,
  ]);
  const oracle = await deploy("PriceOracle", priceOracleAbi as Abi, priceOracleBytecode, [LOCAL_ROLES.deployer.address]);
  const tokens: Record<string, Address> = {};
  for (const t of [...info.tokens, ...(opts.extraTokens ?? [])]) {
    // USDT is the token whose transfer returns no bool on chain 1: the local one behaves the same.
    tokens[t.symbol] =
      t.symbol === "USDT"
        ? await deploy(t.symbol, tetherTokenAbi as Abi, tetherTokenBytecode, [`Tether USD (local ${opts.chainId})`, t.symbol, t.decimals])
        : await deploy(t.symbol, testTokenAbi as Abi, testTokenBytecode, [`${t.symbol} (local ${opts.chainId})`, t.symbol, t.decimals]);
  }
  // The DLN-like bridge (every local chain is a source and a destination), deployed after the tokens so their
  // addresses stay as they were. Its solver relays unlocks and cancels as messenger and starts with a token stock.
  const bridgeSource = await deploy("BridgeSource", bridgeSourceAbi as Abi, bridgeSourceBytecode, []);
  const bridgeDestination = await deploy("BridgeDestination", bridgeDestinationAbi as Abi, bridgeDestinationBytecode, []);
  await write("setMessenger", bridgeSource, bridgeSourceAbi as Abi, "setMessenger", [LOCAL_ROLES.bridgeSolver.address]);
  for (const t of [...info.tokens, ...(opts.extraTokens ?? [])])
    await write(`mint ${t.symbol}`, tokens[t.symbol]!, testTokenAbi as Abi, "mint", [
      LOCAL_ROLES.bridgeSolver.address,
      parseUnits("1000000000", t.decimals),
    ]);
  await write("setFeeRecipient", factory, walletFactoryAbi as Abi, "setFeeRecipient", [LOCAL_ROLES.treasury.address, true]);
  const symbols = Object.keys(LOCAL_PRICES);
  await write("setPrices", oracle, priceOracleAbi as Abi, "setPrices", [symbols, symbols.map((s) => parseUnits(LOCAL_PRICES[s]!, 18))]);
  // The sanctions oracle last, so every address above stays what it was before it existed.
  const sanctionsOracle = await deploy("SanctionsOracle", sanctionsOracleAbi as Abi, sanctionsOracleBytecode, [
    LOCAL_ROLES.deployer.address,
  ]);
  for (const { what, hash } of sent) {
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== "success") throw new Error(`local deployment: ${what} reverted`);
  }
  let implementation: Address | undefined;
  if ((walletFactoryAbi as Abi).some((x) => x.type === "function" && x.name === "implementation")) {
    implementation = (await pub.readContract({
      address: factory,
      abi: walletFactoryAbi as Abi,
      functionName: "implementation",
    })) as Address;
  }
  const multicall3 = await placeChainPredeploys(pub, opts.chainId);
  const startBlock = Number(await pub.getBlockNumber());
  return {
    chainId: opts.chainId,
    factory,
    implementation,
    oracle,
    multicall3,
    bridgeSource,
    bridgeDestination,
    sanctionsOracle,
    tokens,
    startBlock,
    // No mainnet Chainlink feed exists on a local chain: prices come from the PriceOracle above.
    priceFeeds: {},
    sequencerFeed: null,
  };
}

/**
 * The sanctions oracle alone (owner: the deployer), for a chain whose state was kept from before it existed
 * (local/stack.ts): an owner-only list of flagged addresses behind `isSanctioned(address)`.
 */
export async function deploySanctionsOracle(opts: { chainId: number; rpcUrl: string }): Promise<Address> {
  const transport = http(opts.rpcUrl);
  const chain = {
    id: opts.chainId,
    name: `local ${opts.chainId}`,
    nativeCurrency: { name: "ETH", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [opts.rpcUrl] } },
  };
  const pub = createPublicClient({ chain, transport });
  const wallet = createWalletClient({ chain, transport, account: LOCAL_ROLES.deployer });
  const hash = await wallet.deployContract({
    abi: sanctionsOracleAbi as Abi,
    bytecode: sanctionsOracleBytecode,
    args: [LOCAL_ROLES.deployer.address],
    gas: 2_000_000n,
  } as any);
  const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (receipt.status !== "success" || !receipt.contractAddress) throw new Error("local deployment: SanctionsOracle reverted");
  return receipt.contractAddress;
}
