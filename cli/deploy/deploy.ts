import fs from "node:fs";
import {
  createPublicClient,
  encodeFunctionData,
  type Abi,
  createWalletClient,
  getAddress,
  http,
  isAddress,
  keccak256,
  zeroAddress,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
} from "viem";
import { priceOracleAbi } from "../../abis/PriceOracle.js";
import { walletFactoryAbi } from "../../abis/WalletFactory.js";
import { chainInfo } from "../../chains/registry.js";
import { urlHost } from "../../chains/rpc-pool.js";
import type { ChainDeployment, Deployments } from "../../chains/runtime.js";
import { CREATE2_DEPLOYER, CREATE2_DEPLOYER_CODE, factoryOf, oracleOf } from "./contracts.js";

/**
 * `npm run cli -- deploy`: places this release's contracts on a chain, or checks they are there. Each step reads the
 * chain first and does only what is missing, so a second run changes nothing:
 *   1. the CREATE2 deployment proxy is there (on an Anvil: placed, as Multicall3 is);
 *   2. the factory (and the implementation it creates) and, where the chain needs ours, the PriceOracle: deployed
 *      through the proxy, or found and their code hashes checked against this release's;
 *   3. the fee recipient allow-listed on the factory;
 *   4. the oracle handed to its owner (the price pusher's key), then the factory to `owner` (a multisig in production).
 * A step the deployer can no longer do (the factory already handed over) is printed for the owner to do. Dry run unless
 * `send`; the deployments file is written only when everything is in place.
 */

export type DeployOptions = {
  chainId: number;
  rpcUrl: string;
  /** The deployer: signs (a private key or a remote signer), and is each contract's first owner. */
  account: LocalAccount;
  owner: Address;
  settler: Address;
  feeRecipient?: Address;
  /** Deploy our PriceOracle (default: where no Chainlink feed prices the chain's native coin). */
  oracle?: boolean;
  /** Who owns the oracle in the end: the price pusher's key (default: `owner`). */
  oracleOwner?: Address;
  deploymentsFile?: string;
  send: boolean;
  log?: (line: string) => void;
};

export type DeployStep = {
  what: string;
  /** ok: in place already; sent: done by this run; todo: would be done (dry run); owner: for the owner to do. */
  status: "ok" | "sent" | "todo" | "owner";
  detail: string;
};

export type DeployResult = {
  steps: DeployStep[];
  /** What the deployments file holds for the chain (null: not everything is in place yet). */
  deployment: ChainDeployment | null;
  /** The environment lines `npm run serve` needs for this chain. */
  env: string[];
  /** Whether this run sent anything. */
  changed: boolean;
};

export class DeployError extends Error {}

const same = (a: string | undefined | null, b: string | undefined | null) => !!a && !!b && a.toLowerCase() === b.toLowerCase();

/** Whether the chain needs our PriceOracle: no Chainlink feed for its native coin (or no native coin: a service chain). */
export function needsOwnOracle(chainId: number): boolean {
  const info = chainInfo(chainId);
  return !info?.native || !info.priceFeeds?.[info.native.oracleSymbol];
}

export async function deploy(opts: DeployOptions): Promise<DeployResult> {
  const log = opts.log ?? (() => {});
  const info = chainInfo(opts.chainId);
  if (!info) throw new DeployError(`chain ${opts.chainId} is not in the registry (chains/registry.ts)`);
  for (const [flag, v] of [
    ["owner", opts.owner],
    ["settler", opts.settler],
    ["fee-recipient", opts.feeRecipient],
    ["oracle-owner", opts.oracleOwner],
  ] as const)
    if (v !== undefined && (!isAddress(v, { strict: false }) || v === zeroAddress)) throw new DeployError(`--${flag} is not an address`);
  const pub = createPublicClient({ transport: http(opts.rpcUrl, { retryCount: 2 }) }) as PublicClient;
  const answered = await pub.getChainId().catch((e) => {
    throw new DeployError(`${urlHost(opts.rpcUrl)} did not answer: ${(e as Error).message.split("\n")[0]}`);
  });
  if (answered !== opts.chainId) throw new DeployError(`${urlHost(opts.rpcUrl)} answers for chain ${answered}, not ${opts.chainId}`);
  const chain = {
    id: opts.chainId,
    name: info.name,
    nativeCurrency: { name: info.native?.symbol ?? "ETH", symbol: info.native?.symbol ?? "ETH", decimals: 18 },
    rpcUrls: { default: { http: [opts.rpcUrl] } },
  };
  const wallet = createWalletClient({ chain, transport: http(opts.rpcUrl), account: opts.account });
  const deployer = opts.account.address;
  const steps: DeployStep[] = [];
  let changed = false;
  let deployedAt: bigint | undefined;
  const step = (s: DeployStep) => {
    steps.push(s);
    log(`${s.status.padEnd(5)} ${s.what}: ${s.detail}`);
  };
  const send = async (what: string, to: Address, data: Hex): Promise<bigint> => {
    const hash = await wallet.sendTransaction({ to, data, chain });
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 500 });
    if (receipt.status !== "success") throw new DeployError(`${what}: transaction ${hash} reverted`);
    changed = true;
    return receipt.blockNumber;
  };

  // 1. The deployment proxy.
  const proxyCode = await pub.getCode({ address: CREATE2_DEPLOYER });
  if (proxyCode && proxyCode !== "0x") {
    if (!same(proxyCode, CREATE2_DEPLOYER_CODE))
      throw new DeployError(`${CREATE2_DEPLOYER} holds other code than the CREATE2 deployment proxy`);
    step({ what: "CREATE2 deployment proxy", status: "ok", detail: CREATE2_DEPLOYER });
  } else if (await isAnvil(pub)) {
    if (opts.send) {
      await rawRequest(pub, "anvil_setCode", [CREATE2_DEPLOYER, CREATE2_DEPLOYER_CODE]);
      changed = true;
    }
    step({ what: "CREATE2 deployment proxy", status: opts.send ? "sent" : "todo", detail: `placed at ${CREATE2_DEPLOYER} (Anvil)` });
  } else
    throw new DeployError(
      `no CREATE2 deployment proxy at ${CREATE2_DEPLOYER} on chain ${opts.chainId}: send its presigned deployment first (github.com/Arachnid/deterministic-deployment-proxy)`,
    );

  // 2. The contracts, through the proxy; what is found is checked.
  const { factory, implementation } = factoryOf(deployer, getAddress(opts.settler));
  const withOracle = opts.oracle ?? needsOwnOracle(opts.chainId);
  const oracle = withOracle ? oracleOf(deployer) : null;
  const present = async (c: { name: string; address: Address; codeHash: Hex }) => {
    const code = await pub.getCode({ address: c.address });
    if (!code || code === "0x") return false;
    if (keccak256(code) !== c.codeHash)
      throw new DeployError(`${c.name} at ${c.address} has code hash ${keccak256(code)}, not this release's ${c.codeHash}`);
    return true;
  };
  for (const c of [factory, ...(oracle ? [oracle] : [])]) {
    if (await present(c)) {
      step({ what: c.name, status: "ok", detail: `${c.address}, code hash matches` });
      continue;
    }
    if (opts.send) {
      const block = await send(`deploy ${c.name}`, CREATE2_DEPLOYER, c.calldata);
      if (c === factory) deployedAt = block;
      if (!(await present(c))) throw new DeployError(`deploy ${c.name}: no code at ${c.address} after the transaction`);
    }
    step({ what: c.name, status: opts.send ? "sent" : "todo", detail: `${opts.send ? "deployed" : "deploy"} at ${c.address} (CREATE2)` });
  }
  const factoryLive = opts.send || (await present(factory));
  if (factoryLive) {
    if (!(await present(implementation))) throw new DeployError(`the factory's implementation ${implementation.address} has no code`);
    step({ what: "ForwarderWallet implementation", status: "ok", detail: `${implementation.address}, code hash matches` });
  }

  // 3. Roles on the factory: the settler (set by the constructor), the fee recipient.
  const read = <T>(functionName: string, args: unknown[] = [], address = factory.address) =>
    pub.readContract({ address, abi: walletFactoryAbi as Abi, functionName, args }) as Promise<T>;
  const factoryOwner = factoryLive ? await read<Address>("owner") : deployer;
  const canAct = same(factoryOwner, deployer);
  if (factoryLive && !(await read<boolean>("isSettler", [opts.settler])))
    step({ what: "settler", status: "owner", detail: `${factoryOwner} must call setSettler(${opts.settler}, true)` });
  else step({ what: "settler", status: factoryLive ? "ok" : "todo", detail: `${opts.settler} may sweep` });
  if (opts.feeRecipient) {
    const listed = factoryLive && (await read<boolean>("isFeeRecipient", [opts.feeRecipient]));
    if (listed) step({ what: "fee recipient", status: "ok", detail: `${opts.feeRecipient} allow-listed` });
    else if (!canAct)
      step({ what: "fee recipient", status: "owner", detail: `${factoryOwner} must call setFeeRecipient(${opts.feeRecipient}, true)` });
    else {
      if (opts.send) await send("setFeeRecipient", factory.address, encode(walletFactoryAbi, "setFeeRecipient", [opts.feeRecipient, true]));
      step({ what: "fee recipient", status: opts.send ? "sent" : "todo", detail: `allow-list ${opts.feeRecipient}` });
    }
  }

  // 4. Ownership: the oracle to its owner, the factory to `owner`, last (the deployer can do nothing after).
  if (oracle) {
    const want = getAddress(opts.oracleOwner ?? opts.owner);
    const has = opts.send || (await present(oracle)) ? await read<Address>("owner", [], oracle.address) : deployer;
    if (same(has, want)) step({ what: "PriceOracle owner", status: "ok", detail: want });
    else if (!same(has, deployer)) throw new DeployError(`the PriceOracle ${oracle.address} is owned by ${has}, not ${want}`);
    else {
      if (opts.send) await send("PriceOracle transferOwnership", oracle.address, encode(priceOracleAbi, "transferOwnership", [want]));
      step({ what: "PriceOracle owner", status: opts.send ? "sent" : "todo", detail: `hand over to ${want}` });
    }
  }
  const owner = getAddress(opts.owner);
  if (same(factoryOwner, owner)) step({ what: "factory owner", status: "ok", detail: owner });
  else if (!canAct) throw new DeployError(`the factory ${factory.address} is owned by ${factoryOwner}, not ${owner}`);
  else {
    if (opts.send) await send("WalletFactory transferOwnership", factory.address, encode(walletFactoryAbi, "transferOwnership", [owner]));
    step({ what: "factory owner", status: opts.send ? "sent" : "todo", detail: `hand over to ${owner}` });
  }

  const complete = steps.every((s) => s.status === "ok" || s.status === "sent");
  let deployment: ChainDeployment | null = null;
  if (complete) {
    const file = readFile(opts.deploymentsFile);
    const previous = file.chains[String(opts.chainId)];
    const startBlock =
      deployedAt !== undefined
        ? Number(deployedAt)
        : same(previous?.factory, factory.address)
          ? previous!.startBlock
          : Number(await firstBlockWithCode(pub, factory.address));
    deployment = {
      ...(previous && same(previous.factory, factory.address) ? previous : { tokens: {} }),
      chainId: opts.chainId,
      factory: factory.address,
      implementation: implementation.address,
      ...(oracle ? { oracle: oracle.address } : {}),
      startBlock,
    } as ChainDeployment;
    if (opts.deploymentsFile && JSON.stringify(previous) !== JSON.stringify(deployment)) {
      file.chains[String(opts.chainId)] = deployment;
      fs.writeFileSync(opts.deploymentsFile, `${JSON.stringify(file, null, 2)}\n`);
      log(`wrote chain ${opts.chainId} to ${opts.deploymentsFile}`);
    }
  }
  const id = opts.chainId;
  const env = [
    `RPC_URL_${id}=${opts.rpcUrl}`,
    `FACTORY_ADDRESS_${id}=${factory.address}`,
    `FACTORY_IMPLEMENTATION_${id}=${implementation.address}`,
    ...(oracle ? [`ORACLE_ADDRESS_${id}=${oracle.address}`] : []),
    `START_BLOCK_${id}=${deployment?.startBlock ?? "<the factory's block>"}`,
    ...(opts.feeRecipient ? [`FEE_RECIPIENT=${getAddress(opts.feeRecipient)}`] : []),
    `# SETTLER_PRIVATE_KEY (or SIGNER_URL with SIGNER_ADDRESS=${getAddress(opts.settler)}): the settler's key`,
    ...(oracle ? [`# PRICE_PUSHER_PRIVATE_KEY: the key of ${getAddress(opts.oracleOwner ?? opts.owner)}, to keep the oracle fresh`] : []),
  ];
  return { steps, deployment, env, changed };
}

/** encodeFunctionData over the owner calls above (setFeeRecipient, transferOwnership). */
const encode = (abi: Abi, functionName: string, args: unknown[]): Hex => encodeFunctionData({ abi, functionName, args });

function readFile(file: string | undefined): Deployments {
  if (!file || !fs.existsSync(file)) return { chains: {} };
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Deployments;
  } catch {
    throw new DeployError(`${file} is not a deployments file (JSON)`);
  }
}

/** A JSON-RPC method viem's types do not list (a node's own: anvil_setCode, web3_clientVersion). */
const rawRequest = (pub: PublicClient, method: string, params: unknown[]) =>
  (pub.request as (args: { method: string; params: unknown[] }) => Promise<unknown>)({ method, params });

async function isAnvil(pub: PublicClient): Promise<boolean> {
  const v = await rawRequest(pub, "web3_clientVersion", []).catch(() => "");
  return typeof v === "string" && v.toLowerCase().startsWith("anvil");
}

/** The first block where `address` has code (binary search of eth_getCode: a factory found, deployed by an earlier run). */
export async function firstBlockWithCode(pub: PublicClient, address: Address): Promise<bigint> {
  let lo = 0n;
  let hi = await pub.getBlockNumber();
  while (lo < hi) {
    const mid = (lo + hi) / 2n;
    const code = await pub.getCode({ address, blockNumber: mid });
    if (code && code !== "0x") hi = mid;
    else lo = mid + 1n;
  }
  return lo;
}
