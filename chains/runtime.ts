import fs from "node:fs";
import { getAddress, type Address } from "viem";
import { CHAINS, MULTICALL3_ADDRESS, type ChainInfo, type FeeRule, type PriceFeed, type TokenInfo } from "./registry.js";

/** Contracts deployed by the local stack (or by an operator), written as JSON and named by DEPLOYMENTS_FILE. */
export type ChainDeployment = {
  chainId: number;
  factory: Address;
  implementation?: Address;
  oracle?: Address;
  /** Multicall3, where the local stack placed it. */
  multicall3?: Address;
  /** The local DLN-like bridge (contracts/BridgeSource.sol, contracts/BridgeDestination.sol), on every local chain. */
  bridgeSource?: Address;
  bridgeDestination?: Address;
  /** The local sanctions oracle (contracts/SanctionsOracle.sol, the public oracle's `isSanctioned` interface). */
  sanctionsOracle?: Address;
  /** symbol -> address of tokens deployed for this chain (test tokens on Anvil). */
  tokens: Record<string, Address>;
  /**
   * The Chainlink feeds of this deployment, replacing the registry's (a local chain has none of the mainnet feeds: the
   * local stack writes `{}`, or the MockV3Aggregator feeds it deployed); absent: the registry's.
   */
  priceFeeds?: Record<string, PriceFeed>;
  /** The deployment's sequencer uptime feed (null: none), replacing the registry's. */
  sequencerFeed?: Address | null;
  startBlock: number;
};
export type Deployments = { chains: Record<string, ChainDeployment> };

export type ActiveToken = TokenInfo & { address: Address };
export type ActiveChain = Omit<ChainInfo, "tokens"> & {
  /** The first of `rpcUrls`: where a tool that takes one URL goes (the local stack, the sandbox CLI). */
  rpcUrl: string;
  /**
   * Every JSON-RPC provider of the chain, in the operator's order (RPC_URL_<chainId>, comma-separated): reads go to the
   * first usable one, broadcasts to all (chains/rpc-pool.ts); the indexer gets the same list.
   */
  rpcUrls: string[];
  /** Requests per second per provider (RPC_MAX_RPS_<chainId>: one number for all, or one per URL); empty: no limit. */
  rpcMaxRps: number[];
  factory?: Address;
  implementation?: Address;
  oracle?: Address;
  /** Multicall3 (native balances are read in one batch). */
  multicall3: Address;
  /** The bridge's contracts on this chain (cross-chain payments), when there are any. */
  bridgeSource?: Address;
  bridgeDestination?: Address;
  /** BRIDGE_CANCEL_MAX_VALUE_WEI_<chainId>: the most a bridge cancel sent on this chain may carry (wei); none by default. */
  bridgeCancelMaxValueWei?: bigint;
  /**
   * Sanctions screening of this chain's senders (modules/sanctions): an on-chain oracle with `isSanctioned(address)`
   * (SANCTIONS_ORACLE_ADDRESS_<chainId>, `none` for none, else the deployments file) and/or an address list file for this chain alone
   * (SANCTIONS_LIST_FILE_<chainId>, on top of SANCTIONS_LIST_FILE for every chain). Neither: not screened by an oracle.
   */
  sanctionsOracle?: Address;
  sanctionsListFile?: string;
  startBlock: number;
  tokens: ActiveToken[];
};

type Env = Record<string, string | undefined>;

export function readDeployments(env: Env = process.env): Deployments {
  const file = env.DEPLOYMENTS_FILE;
  if (!file || !fs.existsSync(file)) return { chains: {} };
  return JSON.parse(fs.readFileSync(file, "utf8")) as Deployments;
}

const addr = (v: string | undefined) => (v ? getAddress(v) : undefined);

/** RPC_URL_<chainId>: one URL or several, comma-separated (spaces ignored). */
export function rpcUrlsOf(v: string | undefined): string[] {
  return (v ?? "")
    .split(",")
    .map((u) => u.trim())
    .filter(Boolean);
}
/** RPC_MAX_RPS_<chainId>: "25" for every provider, or "25,10" one per URL in RPC_URL_<chainId>'s order. */
function maxRpsOf(v: string | undefined, chainId: number): number[] {
  if (!v?.trim()) return [];
  return v.split(",").map((x) => {
    const n = Number(x.trim());
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`RPC_MAX_RPS_${chainId} must be whole numbers of requests per second, comma-separated`);
    return n;
  });
}

/**
 * The chains this process works with: every registry chain that has RPC_URL_<chainId>.
 * Addresses come from the environment first (production), then from the deployments file
 * (local Anvil stack), then from the registry's well-known addresses.
 */
export function activeChains(env: Env = process.env): ActiveChain[] {
  const deployments = readDeployments(env);
  const out: ActiveChain[] = [];
  for (const chain of CHAINS) {
    const rpcUrls = rpcUrlsOf(env[`RPC_URL_${chain.chainId}`]);
    if (rpcUrls.length === 0) continue;
    const dep = deployments.chains[String(chain.chainId)];
    const tokens: ActiveToken[] = [];
    for (const t of chain.tokens) {
      const address = addr(env[`TOKEN_ADDRESS_${chain.chainId}_${t.symbol}`]) ?? addr(dep?.tokens[t.symbol]) ?? t.address;
      if (address) tokens.push({ ...t, address });
    }
    out.push({
      ...chain,
      rpcUrl: rpcUrls[0]!,
      rpcUrls,
      rpcMaxRps: maxRpsOf(env[`RPC_MAX_RPS_${chain.chainId}`], chain.chainId),
      factory: addr(env[`FACTORY_ADDRESS_${chain.chainId}`]) ?? dep?.factory,
      implementation: addr(env[`FACTORY_IMPLEMENTATION_${chain.chainId}`]) ?? dep?.implementation,
      oracle: addr(env[`ORACLE_ADDRESS_${chain.chainId}`]) ?? dep?.oracle,
      multicall3: addr(env[`MULTICALL3_ADDRESS_${chain.chainId}`]) ?? addr(dep?.multicall3) ?? MULTICALL3_ADDRESS,
      bridgeSource: bridgeContractOf(env[`BRIDGE_SOURCE_ADDRESS_${chain.chainId}`], dep?.bridgeSource, chain.dln?.source),
      bridgeDestination: bridgeContractOf(
        env[`BRIDGE_DESTINATION_ADDRESS_${chain.chainId}`],
        dep?.bridgeDestination,
        chain.dln?.destination,
      ),
      // `none` turns off a deployment's oracle (the local stack deploys one on every chain).
      sanctionsOracle:
        env[`SANCTIONS_ORACLE_ADDRESS_${chain.chainId}`] === "none"
          ? undefined
          : (addr(env[`SANCTIONS_ORACLE_ADDRESS_${chain.chainId}`]) ?? addr(dep?.sanctionsOracle)),
      sanctionsListFile: env[`SANCTIONS_LIST_FILE_${chain.chainId}`] || undefined,
      bridgeCancelMaxValueWei: weiOf(env, `BRIDGE_CANCEL_MAX_VALUE_WEI_${chain.chainId}`),
      startBlock: Number(env[`START_BLOCK_${chain.chainId}`] ?? dep?.startBlock ?? 0),
      tokens,
      fees: feeRuleOf(chain, env),
      priceFeeds: priceFeedsOf(chain, dep, env),
      sequencerFeed: sequencerFeedOf(chain, dep, env),
    });
  }
  return out;
}

/** A wei amount from the environment (unset: undefined); anything but a non-negative integer is a start error. */
function weiOf(env: Env, name: string): bigint | undefined {
  const v = env[name];
  if (v === undefined || v === "") return undefined;
  if (!/^\d+$/.test(v)) throw new Error(`${name} must be an integer number of wei, got ${JSON.stringify(v)}`);
  return BigInt(v);
}

/** A bridge contract: the environment's (`none`: off), over the deployment's, over DLN's registry address. */
function bridgeContractOf(fromEnv: string | undefined, fromDeployment: string | undefined, dln: Address | undefined): Address | undefined {
  if (fromEnv === "none") return undefined;
  return addr(fromEnv) ?? addr(fromDeployment) ?? dln;
}

/**
 * A chain's Chainlink feeds: PRICE_FEED_<chainId>_<SYMBOL> (`<address>[:<heartbeat seconds>]`, or `none`), over the
 * deployment's (when it lists any), over the registry's.
 */
function priceFeedsOf(chain: ChainInfo, dep: ChainDeployment | undefined, env: Env): Record<string, PriceFeed> {
  const feeds: Record<string, PriceFeed> = { ...(dep?.priceFeeds ?? chain.priceFeeds ?? {}) };
  const prefix = `PRICE_FEED_${chain.chainId}_`;
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(prefix) || !value) continue;
    const symbol = name.slice(prefix.length).toUpperCase();
    if (value === "none") {
      delete feeds[symbol];
      continue;
    }
    const [address, heartbeat] = value.split(":");
    const heartbeatS = heartbeat === undefined ? (feeds[symbol]?.heartbeatS ?? 3600) : Number(heartbeat);
    if (!Number.isInteger(heartbeatS) || heartbeatS <= 0) throw new Error(`${name} must be <address>[:<heartbeat seconds>]`);
    feeds[symbol] = { address: getAddress(address!), heartbeatS };
  }
  return feeds;
}
/** SEQUENCER_FEED_<chainId> (an address, or `none`), over the deployment's, over the registry's. */
function sequencerFeedOf(chain: ChainInfo, dep: ChainDeployment | undefined, env: Env): Address | undefined {
  const v = env[`SEQUENCER_FEED_${chain.chainId}`];
  if (v === "none") return undefined;
  if (v) return getAddress(v);
  if (dep && dep.sequencerFeed !== undefined) return dep.sequencerFeed ?? undefined;
  return chain.sequencerFeed;
}

/** The registry's fee rule of a chain, with the operator's cap (`MAX_FEE_PER_GAS_GWEI_<chainId>`, a positive number). */
function feeRuleOf(chain: ChainInfo, env: Env): FeeRule {
  const raw = env[`MAX_FEE_PER_GAS_GWEI_${chain.chainId}`];
  if (raw === undefined || raw === "") return chain.fees;
  const cap = Number(raw);
  if (!Number.isFinite(cap) || cap <= 0) throw new Error(`MAX_FEE_PER_GAS_GWEI_${chain.chainId} must be a positive number of gwei`);
  return { ...chain.fees, maxFeePerGasGwei: cap };
}

/** The token of a chain by address (case-insensitive), native included. */
export function findToken(chain: ActiveChain, address: string): ActiveToken | undefined {
  const a = address.toLowerCase();
  if (a === "0x0000000000000000000000000000000000000000" && chain.native)
    return { ...chain.native, address: "0x0000000000000000000000000000000000000000" };
  return chain.tokens.find((t) => t.address.toLowerCase() === a);
}
