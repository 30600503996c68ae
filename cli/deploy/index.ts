import { parseArgs } from "node:util";
import { getAddress, isAddress, type Address, type Hex, type LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { remoteSigner } from "../../chains/remote-signer.js";
import { deploy, DeployError } from "./deploy.js";

export { CREATE2_DEPLOYER, DEPLOY_SALT, factoryOf, oracleOf } from "./contracts.js";
export { deploy, DeployError, needsOwnOracle, type DeployOptions, type DeployResult, type DeployStep } from "./deploy.js";

export const DEPLOY_USAGE = `  deploy --chain <id> --rpc <url> --owner <address> --settler <address> [--fee-recipient <address>]
         [--oracle | --no-oracle] [--oracle-owner <address>] [--deployments <file>] [--yes]
      (the contracts through the CREATE2 proxy: the same factory address on every chain; dry run unless --yes;
       the deployer's key from DEPLOYER_PRIVATE_KEY, or DEPLOYER_SIGNER_URL with DEPLOYER_ADDRESS: never a flag)`;

/** The deployer's account from the environment: a key, or a remote signer (eth_signTransaction). */
export function deployerAccount(env: Record<string, string | undefined>): LocalAccount {
  const key = env.DEPLOYER_PRIVATE_KEY;
  if (key) {
    if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new DeployError("DEPLOYER_PRIVATE_KEY must be a 0x-prefixed 32-byte hex key");
    return privateKeyToAccount(key as Hex);
  }
  if (env.DEPLOYER_SIGNER_URL) {
    if (!env.DEPLOYER_ADDRESS || !isAddress(env.DEPLOYER_ADDRESS, { strict: false }))
      throw new DeployError("DEPLOYER_SIGNER_URL needs DEPLOYER_ADDRESS, the account it signs with");
    return remoteSigner({ url: env.DEPLOYER_SIGNER_URL, address: getAddress(env.DEPLOYER_ADDRESS) });
  }
  throw new DeployError("set DEPLOYER_PRIVATE_KEY, or DEPLOYER_SIGNER_URL with DEPLOYER_ADDRESS (the key is never a flag)");
}

/** `npm run cli -- deploy …`: prints each step, then the environment lines; exit 1 on a failure (what and why). */
export async function runDeployCli(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  try {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowNegative: true,
      options: {
        chain: { type: "string" },
        rpc: { type: "string" },
        owner: { type: "string" },
        settler: { type: "string" },
        "fee-recipient": { type: "string" },
        oracle: { type: "boolean" },
        "oracle-owner": { type: "string" },
        deployments: { type: "string" },
        yes: { type: "boolean" },
      },
    });
    const need = (flag: keyof typeof values) => {
      const v = values[flag];
      if (typeof v !== "string" || !v) throw new DeployError(`--${flag} is required\n${DEPLOY_USAGE}`);
      return v;
    };
    const chainId = Number(need("chain"));
    if (!Number.isInteger(chainId) || chainId <= 0) throw new DeployError("--chain must be a chain id");
    const send = values.yes === true;
    const result = await deploy({
      chainId,
      rpcUrl: need("rpc"),
      account: deployerAccount(env),
      owner: need("owner") as Address,
      settler: need("settler") as Address,
      feeRecipient: values["fee-recipient"] as Address | undefined,
      oracle: values.oracle,
      oracleOwner: values["oracle-owner"] as Address | undefined,
      deploymentsFile: values.deployments ?? env.DEPLOYMENTS_FILE,
      send,
      log: (line) => console.log(line),
    });
    const forOwner = result.steps.filter((s) => s.status === "owner");
    if (!send && result.steps.some((s) => s.status === "todo")) console.log("\nDry run: nothing sent. Run again with --yes to send.");
    else if (!result.changed) console.log("\nEverything was already in place: nothing sent.");
    if (forOwner.length) console.log(`\nLeft for the owner:\n${forOwner.map((s) => `  ${s.detail}`).join("\n")}`);
    console.log(`\nEnvironment for npm run serve:\n${result.env.join("\n")}`);
    return 0;
  } catch (e) {
    console.error(`deploy: ${e instanceof DeployError || (e as Error).name === "TypeError" ? (e as Error).message : (e as Error).stack}`);
    return 1;
  }
}
