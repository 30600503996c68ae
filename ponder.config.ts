import { createConfig } from "ponder";
import { erc20Abi } from "viem";
import { walletFactoryAbi } from "./abis/WalletFactory";
import { activeChains } from "./chains/runtime";

// Generated from the chain registry: a chain is indexed when RPC_URL_<chainId> is set.
const chains = activeChains();
const local = process.env.LOCAL_CHAINS?.split(",").map(Number) ?? [];
// Chains whose final blocks Ponder does not keep in its sync store (smaller `ponder_sync`, slower re-index).
const noCache = process.env.PONDER_DISABLE_CACHE?.split(",").map(Number) ?? [];

export default createConfig({
  ordering: "multichain",
  database: process.env.DATABASE_URL ? { kind: "postgres", connectionString: process.env.DATABASE_URL } : undefined,
  chains: Object.fromEntries(
    chains.map((c) => [
      c.key,
      {
        id: c.chainId,
        rpc: c.rpcUrl,
        pollingInterval: Number(process.env.PONDER_POLLING_INTERVAL ?? (local.includes(c.chainId) ? 200 : 1000)),
        disableCache: local.includes(c.chainId) || noCache.includes(c.chainId),
      },
    ]),
  ),
  contracts: {
    // No address: a wildcard filter on the Transfer topic, so custom tokens and wrong tokens sent to our
    // addresses are seen. src/index.ts keeps only transfers touching our addresses; logs that do not decode
    // as ERC-20 (ERC-721 Transfers: 4 topics) are skipped by Ponder.
    Token: {
      abi: erc20Abi,
      chain: Object.fromEntries(chains.map((c) => [c.key, { startBlock: c.startBlock }])),
    },
    WalletFactory: {
      abi: walletFactoryAbi,
      chain: Object.fromEntries(chains.filter((c) => c.factory).map((c) => [c.key, { address: c.factory!, startBlock: c.startBlock }])),
    },
  },
});
