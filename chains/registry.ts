import { getAddress, zeroAddress, type Address } from "viem";

/**
 * The one chain and token registry. Everything chain-specific (ids, native coins,
 * tokens, decimals, finality, which chains the price index covers) is read from here:
 * ponder.config.ts, the API and the processors never list chains themselves.
 */

export type TokenKind = "native" | "stablecoin" | "token";

export type TokenInfo = {
  symbol: string;
  decimals: number;
  kind: TokenKind;
  /** Well-known contract address; `undefined` where the spec leaves it to deployment (service chains, test tokens). */
  address?: Address;
  /** Symbol the on-chain oracle prices it under (USDT0 is priced as USDT). */
  oracleSymbol: string;
};

/** A Chainlink price feed (AggregatorV3Interface proxy): USD per unit, `heartbeatS` the longest it goes unupdated. */
export type PriceFeed = { address: Address; heartbeatS: number };

export type ChainInfo = {
  chainId: number;
  name: string;
  /** Ponder's chain key. */
  key: string;
  testnet: boolean;
  /** Covered by the price index provider (spec: chains 1, 137, 56, 8453). */
  priceIndexed: boolean;
  /** The price index provider's ids (CoinGecko): asset platform, and the native coin's id. */
  priceIndexIds?: { platform: string; nativeCoin: string };
  /** Blocks after which Ponder treats a block as final. */
  finalityBlocks: number;
  native?: TokenInfo;
  tokens: TokenInfo[];
  /** How transactions are priced and when one that waits is replaced (chains/fees.ts). */
  fees: FeeRule;
  /**
   * What a transaction pays for its L1 data (modules/pricing/l1-fee.ts): on an OP-stack chain a fee on top of L2 gas
   * (GasPriceOracle predeploy); on Arbitrum extra L2 gas, the L1 component eth_estimateGas includes (NodeInterface).
   */
  l1DataFee?: "op-stack" | "arbitrum";
  /**
   * Chainlink USD feeds on this chain by oracle symbol (modules/pricing/chainlink.ts); PRICE_FEED_<chainId>_<SYMBOL>
   * overrides or adds one. Addresses and heartbeats from Chainlink's feed list (checked against aave-address-book).
   */
  priceFeeds?: Record<string, PriceFeed>;
  /** An L2's Chainlink sequencer uptime feed (answer 0 = up): while it is down, or within the grace period after, no price is used. */
  sequencerFeed?: Address;
  /**
   * deBridge DLN's contracts on this chain (the same addresses on every DLN EVM chain): the default bridge source and
   * destination; BRIDGE_SOURCE_ADDRESS_<chainId> / BRIDGE_DESTINATION_ADDRESS_<chainId> override them (`none`: off).
   */
  dln?: { source: Address; destination: Address };
};

/**
 * DLN's DlnSource and DlnDestination, deployed at these addresses on every EVM chain DLN serves (dln-contracts README
 * "Prod addresses"; docs.debridge.com "Deployed contracts").
 */
export const DLN_EVM = {
  source: getAddress("0xeF4fB24aD0916217251F553c0596F8Edc630EB66"),
  destination: getAddress("0xE7351Fd770A37282b91D153Ee690B63579D6dd7f"),
} as const;

/**
 * A chain's fee market as the transaction sender meets it. `MAX_FEE_PER_GAS_GWEI_<chainId>` overrides the cap.
 *
 * @example fees(30, 5_000, 2_000, 5) // Polygon: EIP-1559 with its validators' 30 gwei tip floor
 * @example fees(0, 100, 3_000, 4, "legacy") // a chain without EIP-1559: `gasPrice` only, capped at 100 gwei
 */
export type FeeRule = {
  /**
   * `eip1559` (every chain here): type-2 transactions, a max fee and a tip. `legacy`: a chain without EIP-1559, whose
   * nodes refuse type-2 transactions: type-0 transactions with one `gasPrice` (chains/fees.ts).
   */
  type: "eip1559" | "legacy";
  /** The smallest tip the chain's validators take (Polygon PoS enforces one, about 25-30 gwei). EIP-1559 only. */
  minPriorityFeeGwei: number;
  /** Legacy only: the smallest `gasPrice` the chain's validators take (0 when unset: the node's `eth_gasPrice` is taken). */
  minGasPriceGwei?: number;
  /**
   * The most the service pays per gas (a legacy chain: the most `gasPrice`): a transaction that needs more waits at the
   * cap (health says so).
   */
  maxFeePerGasGwei: number;
  /** Average block interval. */
  blockTimeMs: number;
  /** A transaction not mined after this many blocks is signed again with the same nonce and higher fees. */
  replaceAfterBlocks: number;
};

const fees = (
  minPriorityFeeGwei: number,
  maxFeePerGasGwei: number,
  blockTimeMs: number,
  replaceAfterBlocks: number,
  type: FeeRule["type"] = "eip1559",
): FeeRule => ({
  type,
  minPriorityFeeGwei,
  maxFeePerGasGwei,
  blockTimeMs,
  replaceAfterBlocks,
});

const native = (symbol: string, oracleSymbol = symbol): TokenInfo => ({ symbol, decimals: 18, kind: "native", oracleSymbol });
const stable = (symbol: string, decimals: number, address?: string, oracleSymbol = symbol): TokenInfo => ({
  symbol,
  decimals,
  kind: "stablecoin",
  address: address ? getAddress(address) : undefined,
  oracleSymbol,
});
const token = (symbol: string, decimals: number, address?: string): TokenInfo => ({
  symbol,
  decimals,
  kind: "token",
  address: address ? getAddress(address) : undefined,
  oracleSymbol: symbol,
});

/**
 * Multicall3's canonical address (the same on every chain it is deployed to: 1, 137, 56, 8453, 42161,
 * Sepolia, ...); MULTICALL3_ADDRESS_<chainId> names another, the local stack puts it here (local/deploy.ts).
 */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** The OP-stack GasPriceOracle predeploy (Base, 8453; every OP-stack chain): `getL1Fee(bytes)`, the L1 data fee. */
export const GAS_PRICE_ORACLE: Address = "0x420000000000000000000000000000000000000F";

/** Arbitrum's NodeInterface (a virtual contract its nodes answer for eth_call): `gasEstimateL1Component`. */
export const ARBITRUM_NODE_INTERFACE: Address = "0x00000000000000000000000000000000000000C8";

/** Symbol of the service's own token (chain 1, 18 decimals). */
export const SERVICE_TOKEN_SYMBOL = "CPAY";

export const CHAINS: readonly ChainInfo[] = [
  {
    chainId: 1,
    dln: DLN_EVM,
    name: "Ethereum",
    key: "ethereum",
    testnet: false,
    priceIndexed: true,
    finalityBlocks: 65,
    fees: fees(0, 500, 12_000, 3),
    priceIndexIds: { platform: "ethereum", nativeCoin: "ethereum" },
    native: native("ETH"),
    priceFeeds: { ETH: { address: "0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419", heartbeatS: 3600 } },
    tokens: [
      stable("USDT", 6, "0xdAC17F958D2ee523a2206206994597C13D831ec7"),
      stable("USDC", 6, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"),
      token(SERVICE_TOKEN_SYMBOL, 18),
    ],
  },
  {
    chainId: 137,
    dln: DLN_EVM,
    name: "Polygon",
    key: "polygon",
    testnet: false,
    priceIndexed: true,
    finalityBlocks: 200,
    fees: fees(30, 5_000, 2_000, 5),
    priceIndexIds: { platform: "polygon-pos", nativeCoin: "polygon-ecosystem-token" },
    native: native("MATIC"),
    // Chainlink's "MATIC / USD" proxy prices POL since the migration (there is no separate POL/USD feed on Polygon).
    priceFeeds: { MATIC: { address: "0xAB594600376Ec9fD91F8e885dADF0CE036862dE0", heartbeatS: 27 } },
    tokens: [
      stable("USDT0", 6, "0xc2132D05D31c914a87C6611C10748AEb04B58e8F", "USDT"),
      stable("USDC", 6, "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"),
    ],
  },
  {
    chainId: 56,
    dln: DLN_EVM,
    name: "BNB Smart Chain",
    key: "bsc",
    testnet: false,
    priceIndexed: true,
    finalityBlocks: 30,
    fees: fees(0.1, 100, 3_000, 4),
    priceIndexIds: { platform: "binance-smart-chain", nativeCoin: "binancecoin" },
    native: native("BNB"),
    priceFeeds: { BNB: { address: "0x0567F2323251f0Aab15c8dFb1967E4e8A7D42aeE", heartbeatS: 27 } },
    tokens: [
      stable("USDT", 18, "0x55d398326f99059fF775485246999027B3197955"),
      stable("USDC", 18, "0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d"),
      token("XRP", 18, "0x1D2F0da169ceB9fC7B3144628dB156f3F6c60dBE"),
      token("TRX", 6, "0xCE7de646e7208a4Ef112cb6ed5038FA6cC6b12e3"),
    ],
  },
  {
    chainId: 8453,
    dln: DLN_EVM,
    name: "Base",
    key: "base",
    testnet: false,
    priceIndexed: true,
    finalityBlocks: 30,
    fees: fees(0, 50, 2_000, 5),
    l1DataFee: "op-stack",
    priceIndexIds: { platform: "base", nativeCoin: "ethereum" },
    native: native("ETH"),
    priceFeeds: { ETH: { address: "0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70", heartbeatS: 1200 } },
    sequencerFeed: "0xBCF85224fc0756B9Fa45aA7892530B47e10b6433",
    tokens: [stable("USDC", 6, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")],
  },
  {
    chainId: 42161,
    dln: DLN_EVM,
    name: "Arbitrum One",
    key: "arbitrum",
    testnet: false,
    priceIndexed: false,
    finalityBlocks: 240,
    fees: fees(0, 50, 250, 20),
    l1DataFee: "arbitrum",
    native: native("ETH"),
    priceFeeds: { ETH: { address: "0x639Fe6ab55C921f74e7fac1ee960C0B6293ba612", heartbeatS: 86400 } },
    sequencerFeed: "0xFdB631F5EE196F0ed6FAa767959853A9F217697D",
    tokens: [
      stable("USDT", 6, "0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9"),
      stable("USDC", 6, "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
    ],
  },
  {
    chainId: 777178,
    name: "Service Chain",
    key: "service",
    testnet: false,
    priceIndexed: false,
    finalityBlocks: 30,
    fees: fees(0, 500, 1_000, 3),
    tokens: [stable("USDT", 6), stable("USDC", 6)],
  },
  {
    chainId: 11155111,
    name: "Sepolia",
    key: "sepolia",
    testnet: true,
    priceIndexed: false,
    finalityBlocks: 30,
    fees: fees(0, 500, 12_000, 3),
    native: native("ETH"),
    tokens: [stable("USDT", 6), stable("USDC", 6, "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238")],
  },
  {
    chainId: 777177,
    name: "Service Chain Testnet",
    key: "serviceTestnet",
    testnet: true,
    priceIndexed: false,
    finalityBlocks: 30,
    fees: fees(0, 500, 1_000, 3),
    tokens: [stable("USDT", 6), stable("USDC", 6)],
  },
];

export const SUPPORTED_CHAIN_IDS = CHAINS.map((c) => c.chainId);

export function chainInfo(chainId: number): ChainInfo | undefined {
  return CHAINS.find((c) => c.chainId === chainId);
}

/** Chains where a payment may name any ERC-20 by address (spec: the price-indexed chains and the service chains). */
export function acceptsCustomTokens(chainId: number): boolean {
  const c = chainInfo(chainId);
  return c !== undefined && (c.priceIndexed || c.key === "service" || c.key === "serviceTestnet");
}

export function isNativeToken(address: string): boolean {
  return address.toLowerCase() === zeroAddress;
}
