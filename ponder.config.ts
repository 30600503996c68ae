import { createConfig } from "ponder";
import { erc20Abi } from "viem";
import { walletFactoryAbi } from "./abis/WalletFactory";
import { chainRpcPool } from "./chains/clients";
import { activeChains } from "./chains/runtime";

// Generated from the chain registry: a chain is indexed when RPC_URL_<chainId> is set.
const chains = activeChains();
const local = process.env.LOCAL_CHAINS?.split(",").map(Number) ?? [];
// With the wildcard Transfer filter Ponder's sync cache would keep every Transfer of a chain (benchmarks:
// ~760 MiB/h at 500 logs per block, and write bursts that cost up to 8 blocks of lag). So it is off unless a
// chain is listed in PONDER_CACHE_CHAINS (faster re-index from the cache, at that storage price).
const cached = process.env.PONDER_CACHE_CHAINS?.split(",").map(Number) ?? [];

export default createConfig({
  ordering: "multichain",
  database: process.env.DATABASE_URL ? { kind: "postgres", connectionString: process.env.DATABASE_URL } : undefined,
  chains: Object.fromEntries(
    chains.map((c) => [
      c.key,
      {
        id: c.chainId,
        // Several providers (RPC_URL_<chainId>, comma-separated): the service's own pool (chains/rpc-pool.ts), so the
        // indexer, too, never takes a lagging provider's "latest" for the head, leaves a rate-limited one alone until
        // its Retry-After, and moves on from one that hangs after RPC_TIMEOUT_MS. One URL: Ponder's own client.
        rpc:
          c.rpcUrls.length > 1
            ? chainRpcPool(c, {
                client: "indexer",
                timeoutMs: Number(process.env.RPC_TIMEOUT_MS || 10_000),
                maxLagBlocks: Number(process.env.RPC_MAX_LAG_BLOCKS || 3),
              }).transport
            : c.rpcUrl,
        pollingInterval: Number(process.env.PONDER_POLLING_INTERVAL ?? (local.includes(c.chainId) ? 200 : 1000)),
        disableCache: !cached.includes(c.chainId),
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
