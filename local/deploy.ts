import {
  createPublicClient,
  createWalletClient,
  getContractAddress,
  http,
  parseEther,
  parseUnits,
  stringToHex,
  zeroHash,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { bridgeDestinationAbi, bridgeDestinationBytecode } from "../abis/BridgeDestination.js";
import { bridgeRouterStandInAbi, bridgeRouterStandInBytecode } from "../abis/BridgeRouterStandIn.js";
import { bridgeSourceAbi, bridgeSourceBytecode } from "../abis/BridgeSource.js";
import { deBridgeGateStandInAbi, deBridgeGateStandInBytecode } from "../abis/DeBridgeGateStandIn.js";
import { gasPriceOracleStandInBytecode } from "../abis/GasPriceOracleStandIn.js";
import { multicall3Bytecode } from "../abis/Multicall3.js";
import { nodeInterfaceStandInBytecode } from "../abis/NodeInterfaceStandIn.js";
import { priceOracleAbi, priceOracleBytecode } from "../abis/PriceOracle.js";
import { sanctionsOracleAbi, sanctionsOracleBytecode } from "../abis/SanctionsOracle.js";
import { testTokenAbi, testTokenBytecode } from "../abis/TestToken.js";
import { tetherTokenAbi, tetherTokenBytecode } from "../abis/TetherToken.js";
import { walletFactoryAbi, walletFactoryBytecode } from "../abis/WalletFactory.js";
import {
  ARBITRUM_NODE_INTERFACE,
  chainInfo,
  GAS_PRICE_ORACLE,
  MULTICALL3_ADDRESS,
  SERVICE_TOKEN_SYMBOL,
  SUPPORTED_CHAIN_IDS,
} from "../chains/registry.js";
import type { ChainDeployment } from "../chains/runtime.js";
import { LOCAL_ROLES } from "./accounts.js";
import { DLN_ROUTER, DLN_SOLANA_CHAIN_ID } from "./bridge/abi.js";

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
 * DeBridgeGate's `globalFixedNativeFee` on the local chains: DLN's own per-chain messaging fee (docs.debridge.com
 * "Fees and supported chains": 0.5 MATIC on Polygon, 0.005 BNB on BNB Chain, 0.001 ETH on Ethereum, Base and
 * Arbitrum), 0.001 of the native coin on the other local chains. A cancel or unlock sent from the chain pays it.
 */
export const LOCAL_DLN_FEES: Record<number, bigint> = { 137: parseEther("0.5"), 56: parseEther("0.005") };
export const DEFAULT_DLN_FEE = parseEther("0.001");

/** USDC the pre-swap router holds on each local chain (its swaps pay from it). */
const ROUTER_USDC_STOCK = "1000000000";

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
 * Places the runtime code deployed at `from` at `to` as well (immutables travel in the code; storage does not), unless
 * `to` already has code (a fork of a real chain). Returns whether it did.
 */
async function copyCode(pub: PublicClient, from: Address, to: Address): Promise<boolean> {
  if ((await pub.getCode({ address: to }))?.length) return false;
  const code = await pub.getCode({ address: from });
  if (!code || code === "0x") throw new Error(`local deployment: no code at ${from} to place at ${to}`);
  await pub.request({ method: "anvil_setCode" as any, params: [to, code] as any });
  return true;
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
  // The local DLN (every local chain is a source and a destination), deployed after the tokens so their addresses
  // stay as they were. BridgeDestination takes the gate (deployed below, after the sanctions oracle) by its address.
  // The solver relays unlocks and cancels as messenger and starts with a token stock.
  const bridgeSource = await deploy("BridgeSource", bridgeSourceAbi as Abi, bridgeSourceBytecode, []);
  // The gate's nonce: this one (BridgeDestination), setMessenger, one mint per token, setFeeRecipient, setPrices, the
  // sanctions oracle, then the gate (checked below).
  const mints = info.tokens.length + (opts.extraTokens?.length ?? 0);
  const gateAt = getContractAddress({ from: LOCAL_ROLES.deployer.address, nonce: BigInt(nonce + 5 + mints) });
  const bridgeDestination = await deploy("BridgeDestination", bridgeDestinationAbi as Abi, bridgeDestinationBytecode, [gateAt]);
  await write("setMessenger", bridgeSource, bridgeSourceAbi as Abi, "setMessenger", [LOCAL_ROLES.bridgeSolver.address]);
  for (const t of [...info.tokens, ...(opts.extraTokens ?? [])])
    await write(`mint ${t.symbol}`, tokens[t.symbol]!, testTokenAbi as Abi, "mint", [
      LOCAL_ROLES.bridgeSolver.address,
      parseUnits("1000000000", t.decimals),
    ]);
  await write("setFeeRecipient", factory, walletFactoryAbi as Abi, "setFeeRecipient", [LOCAL_ROLES.treasury.address, true]);
  const symbols = Object.keys(LOCAL_PRICES);
  await write("setPrices", oracle, priceOracleAbi as Abi, "setPrices", [symbols, symbols.map((s) => parseUnits(LOCAL_PRICES[s]!, 18))]);
  // The sanctions oracle after those, so every address above stays what it was before it existed.
  const sanctionsOracle = await deploy("SanctionsOracle", sanctionsOracleAbi as Abi, sanctionsOracleBytecode, [
    LOCAL_ROLES.deployer.address,
  ]);
  // DeBridgeGate's stand-in: DLN's messaging fee of this chain, every registry chain and Solana supported (the route's
  // own fee 0: the global one applies).
  const gate = await deploy("DeBridgeGateStandIn", deBridgeGateStandInAbi as Abi, deBridgeGateStandInBytecode, [
    LOCAL_ROLES.deployer.address,
    LOCAL_DLN_FEES[opts.chainId] ?? DEFAULT_DLN_FEE,
    0,
  ]);
  if (gate !== gateAt) throw new Error(`local deployment: the gate is at ${gate}, BridgeDestination was given ${gateAt}`);
  const routes = [...SUPPORTED_CHAIN_IDS, DLN_SOLANA_CHAIN_ID].map(BigInt);
  await write("updateChainSupport", gate, deBridgeGateStandInAbi as Abi, "updateChainSupport", [
    routes,
    routes.map(() => ({ fixedNativeFee: 0n, isSupported: true, transferFeeBps: 0 })),
  ]);
  // The pre-swap router (into the chain's USDC, at the oracle's prices); a chain without USDC has none.
  const usdc = tokens.USDC;
  const router = usdc
    ? await deploy("BridgeRouterStandIn", bridgeRouterStandInAbi as Abi, bridgeRouterStandInBytecode, [
        bridgeSource,
        usdc,
        oracle,
        info.native ? stringToHex(info.native.oracleSymbol, { size: 32 }) : zeroHash,
      ])
    : undefined;
  for (const { what, hash } of sent) {
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== "success") throw new Error(`local deployment: ${what} reverted`);
  }
  // DLN's fixed addresses, as on the real chains: BridgeDestination at DlnDestination's on a chain DLN serves (its
  // gate is an immutable, in the code), and the router at DeBridgeRouter's on every chain (preswap.ts finds it there).
  // A fork of a real chain already has DLN's contracts there: ours stay where they were deployed.
  const dlnDestination = info.dln && (await copyCode(pub, bridgeDestination, info.dln.destination)) ? info.dln.destination : undefined;
  if (router && (await copyCode(pub, router, DLN_ROUTER))) {
    const decimals = info.tokens.find((t) => t.symbol === "USDC")!.decimals;
    const hash = await wallet.writeContract({
      address: usdc!,
      abi: testTokenAbi as Abi,
      functionName: "mint",
      args: [DLN_ROUTER, parseUnits(ROUTER_USDC_STOCK, decimals)],
      gas: 1_000_000n,
    } as any);
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== "success") throw new Error("local deployment: funding the pre-swap router reverted");
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
    // On a DLN chain: none, so chains/runtime.ts falls back to the registry's DlnDestination address, where it is.
    bridgeDestination: dlnDestination ? undefined : bridgeDestination,
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
