// Real deployments on a real Anvil for the contract tests (and for gas measurements a bench can reuse).
import {
  createPublicClient, createWalletClient, defineChain, getAddress, http, keccak256, parseEventLogs, toHex,
  type Address, type Hex, type PrivateKeyAccount, type TransactionReceipt,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { priceOracleAbi, priceOracleBytecode } from "../../abis/PriceOracle.js";
import { testTokenAbi, testTokenBytecode } from "../../abis/TestToken.js";
import { tetherTokenAbi, tetherTokenBytecode } from "../../abis/TetherToken.js";
import { walletFactoryAbi, walletFactoryBytecode } from "../../abis/WalletFactory.js";
import { ANVIL_KEYS } from "../../local/accounts.js";
import { computeWalletAddress, paymentSalt } from "../../chains/deposit-address.js";

export const NATIVE = "0x0000000000000000000000000000000000000000" as Address;

export function clients(rpcUrl: string, chainId: number) {
  const chain = defineChain({ id: chainId, name: `anvil-${chainId}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } });
  const transport = http(rpcUrl);
  const pub = createPublicClient({ chain, transport, pollingInterval: 20 });
  const walletOf = (account: PrivateKeyAccount) => createWalletClient({ chain, transport, account, pollingInterval: 20 });
  const accounts = {
    owner: privateKeyToAccount(ANVIL_KEYS[0]),
    settler: privateKeyToAccount(ANVIL_KEYS[1]),
    feeRecipient: privateKeyToAccount(ANVIL_KEYS[2]),
    payer: privateKeyToAccount(ANVIL_KEYS[3]),
    stranger: privateKeyToAccount(ANVIL_KEYS[4]),
  };
  /** Waits for a transaction; throws when it reverted unless `allowRevert`. */
  const wait = async (hash: Hex | Promise<Hex>, allowRevert = false): Promise<TransactionReceipt> => {
    const receipt = await pub.waitForTransactionReceipt({ hash: await hash, pollingInterval: 20 });
    if (receipt.status !== "success" && !allowRevert) throw new Error(`transaction ${receipt.transactionHash} reverted`);
    return receipt;
  };
  return { chain, pub, walletOf, accounts, wait };
}

export type Fixture = Awaited<ReturnType<typeof deployFixture>>;

/** Deploys the factory (owner, settler; fee recipient allow-listed), the oracle and three test tokens. */
export async function deployFixture(rpcUrl: string, chainId: number) {
  const c = clients(rpcUrl, chainId);
  const { pub, walletOf, accounts, wait } = c;
  const owner = walletOf(accounts.owner);
  const deployed = async (hash: Promise<Hex>) => getAddress((await wait(hash)).contractAddress!);
  const factory = await deployed(owner.deployContract({ abi: walletFactoryAbi, bytecode: walletFactoryBytecode, args: [accounts.owner.address, accounts.settler.address] }));
  const oracle = await deployed(owner.deployContract({ abi: priceOracleAbi, bytecode: priceOracleBytecode, args: [accounts.owner.address] }));
  const usdc6 = await deployed(owner.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["USD Coin", "USDC", 6] }));
  const dai18 = await deployed(owner.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Dai", "DAI", 18] }));
  const usdt = await deployed(owner.deployContract({ abi: tetherTokenAbi, bytecode: tetherTokenBytecode, args: ["Tether USD", "USDT", 6] }));
  await wait(owner.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "setFeeRecipient", args: [accounts.feeRecipient.address, true] }));
  const implementation = await pub.readContract({ address: factory, abi: walletFactoryAbi, functionName: "implementation" });

  let n = 0;
  /** A fresh address with no balance (never an account). */
  const freshAddress = (): Address => getAddress(`0x${keccak256(toHex(`payout-${chainId}-${n++}-${Math.random()}`)).slice(26)}`);
  const walletAddress = (salt: Hex, payout: Address) => computeWalletAddress({ factory, implementation, salt, payout });

  /** The payer sends `amount` of `token` (NATIVE for the coin) to `to`: a real Transfer (or value transfer). */
  const pay = async (token: Address, to: Address, amount: bigint) => {
    const payer = walletOf(accounts.payer);
    if (token === NATIVE) return wait(payer.sendTransaction({ to, value: amount }));
    // TestToken and TetherToken share mint/transfer; TetherToken's transfer returns nothing.
    const abi = token === usdt ? tetherTokenAbi : testTokenAbi;
    await wait(payer.writeContract({ address: token, abi, functionName: "mint", args: [accounts.payer.address, amount] } as any));
    return wait(payer.writeContract({ address: token, abi, functionName: "transfer", args: [to, amount] } as any));
  };
  const balanceOf = (token: Address, who: Address): Promise<bigint> =>
    token === NATIVE ? pub.getBalance({ address: who }) : pub.readContract({ address: token, abi: testTokenAbi, functionName: "balanceOf", args: [who] });
  const sweepEvents = (receipt: TransactionReceipt) => ({
    deployed: parseEventLogs({ abi: walletFactoryAbi, logs: receipt.logs, eventName: "WalletDeployed" }).map((l) => l.args),
    swept: parseEventLogs({ abi: walletFactoryAbi, logs: receipt.logs, eventName: "Swept" }).map((l) => l.args),
  });

  return { ...c, factory, implementation, oracle, tokens: { usdc6, dai18, usdt }, freshAddress, walletAddress, pay, balanceOf, sweepEvents };
}

/**
 * Gas of real settlements: one deployAndSweep of a fresh wallet (a 6-decimal ERC-20 with a fee, the USDT-like
 * token, the native coin), a sweep of an already-deployed wallet, and one batch of 10 fresh wallets.
 */
export async function measureSweepGas(fx: Fixture) {
  const { accounts, walletOf, wait, factory, tokens } = fx;
  const settler = walletOf(accounts.settler);
  const fee = 1_000n;
  const one = async (token: Address, salt: Hex, payout: Address) => {
    await fx.pay(token, fx.walletAddress(salt, payout), 1_000_000n);
    const r = await wait(settler.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deployAndSweep", args: [salt, payout, token, fee, accounts.feeRecipient.address] }));
    return r.gasUsed;
  };
  const payout = fx.freshAddress();
  const tag = `gas-${Date.now()}-${Math.random()}`;
  const erc20 = await one(tokens.usdc6, paymentSalt(`${tag}-1`), payout);
  const erc20Again = await one(tokens.usdc6, paymentSalt(`${tag}-1`), payout);
  const usdt = await one(tokens.usdt, paymentSalt(`${tag}-2`), payout);
  const native = await one(NATIVE, paymentSalt(`${tag}-3`), payout);
  const reqs = [];
  for (let i = 0; i < 10; i++) {
    const salt = paymentSalt(`${tag}-batch-${i}`);
    const p = fx.freshAddress();
    await fx.pay(tokens.usdc6, fx.walletAddress(salt, p), 1_000_000n);
    reqs.push({ salt, payout: p, token: tokens.usdc6, fee, feeRecipient: accounts.feeRecipient.address });
  }
  const batch = await wait(settler.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deployAndSweepBatch", args: [reqs] }));
  return { deployAndSweepErc20: erc20, sweepDeployedErc20: erc20Again, deployAndSweepUsdt: usdt, deployAndSweepNative: native, batchOf10: batch.gasUsed };
}
