import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { localRoleEnv } from "../local/accounts.js";
import { startAnvil } from "../local/anvil.js";
import { deployLocalChain } from "../local/deploy.js";

// The chain of the container test (scripts/test-container.sh), on the host: one Anvil with this release's contracts,
// deployed as `npm start` deploys them (local/deploy.ts), and the containers' configuration for it written as an env
// file (docs/containers.md). Runs until SIGTERM or SIGINT, then stops Anvil.
//
//   node --import tsx containers/chain.ts <env file>    (CHAIN_ID: 777177 unless set)

const envFile = process.argv[2];
if (!envFile) {
  console.error("usage: node --import tsx containers/chain.ts <env file>");
  process.exit(2);
}
const chainId = Number(process.env.CHAIN_ID ?? 777177);

const anvil = await startAnvil({ chainId, blockTime: 1 });
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await anvil.stop();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());

try {
  const d = await deployLocalChain({ chainId, rpcUrl: anvil.rpcUrl });
  const env: Record<string, string> = {
    // Secrets of this run alone.
    HASH_SECRET: randomBytes(32).toString("hex"),
    SECRET_KEY: randomBytes(32).toString("hex"),
    // The local roles' keys and addresses (Anvil's well-known accounts): settler, fee recipient, treasury.
    ...localRoleEnv(),
    LOCAL_CHAINS: String(chainId),
    [`RPC_URL_${chainId}`]: anvil.rpcUrl,
    [`FACTORY_ADDRESS_${chainId}`]: d.factory,
    ...(d.implementation ? { [`FACTORY_IMPLEMENTATION_${chainId}`]: d.implementation } : {}),
    [`ORACLE_ADDRESS_${chainId}`]: d.oracle,
    [`START_BLOCK_${chainId}`]: String(d.startBlock),
    ...(d.multicall3 ? { [`MULTICALL3_ADDRESS_${chainId}`]: d.multicall3 } : {}),
    ...(d.sanctionsOracle ? { [`SANCTIONS_ORACLE_ADDRESS_${chainId}`]: d.sanctionsOracle } : {}),
    ...Object.fromEntries(Object.entries(d.tokens).map(([symbol, address]) => [`TOKEN_ADDRESS_${chainId}_${symbol}`, address])),
  };
  const text = Object.entries(env)
    .map(([k, v]) => `${k}=${v}\n`)
    .join("");
  // Written whole, then renamed: whoever waits for the file reads all of it.
  fs.writeFileSync(`${envFile}.tmp`, text, { mode: 0o600 });
  fs.renameSync(`${envFile}.tmp`, envFile);
  console.log(`chain ${chainId} ${anvil.rpcUrl}: factory ${d.factory}, start block ${d.startBlock}`);
} catch (e) {
  console.error(e);
  await anvil.stop();
  process.exit(1);
}
