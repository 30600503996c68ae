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
import { encodeSweep } from "../../chains/factory-calls.js";

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
  /** The payer sends `amount` of `token` to each of `to`: one mint, then one transfer each, awaited together. */
  const payMany = async (token: Address, to: readonly Address[], amount: bigint) => {
    const payer = walletOf(accounts.payer);
    const abi = token === usdt ? tetherTokenAbi : testTokenAbi;
    if (token !== NATIVE)
      await wait(payer.writeContract({ address: token, abi, functionName: "mint", args: [accounts.payer.address, amount * BigInt(to.length)] } as any));
    let nonce = await pub.getTransactionCount({ address: accounts.payer.address, blockTag: "pending" });
    const hashes: Hex[] = [];
    for (const a of to)
      hashes.push(
        token === NATIVE
          ? await payer.sendTransaction({ to: a, value: amount, nonce: nonce++ })
          : await payer.writeContract({ address: token, abi, functionName: "transfer", args: [a, amount], nonce: nonce++ } as any),
      );
    for (const h of hashes) await wait(h);
  };
  const balanceOf = (token: Address, who: Address): Promise<bigint> =>
    token === NATIVE ? pub.getBalance({ address: who }) : pub.readContract({ address: token, abi: testTokenAbi, functionName: "balanceOf", args: [who] });
  const sweepEvents = (receipt: TransactionReceipt) => ({
    deployed: parseEventLogs({ abi: walletFactoryAbi, logs: receipt.logs, eventName: "WalletDeployed" }).map((l) => l.args),
    swept: parseEventLogs({ abi: walletFactoryAbi, logs: receipt.logs, eventName: "Swept" }).map((l) => l.args),
  });

  return { ...c, factory, implementation, oracle, tokens: { usdc6, dai18, usdt }, freshAddress, walletAddress, pay, payMany, balanceOf, sweepEvents };
}

/** A token of the gas measurements: a 6-decimal ERC-20, the USDT-like token (no bool), the native coin. */
export type GasToken = "erc20" | "usdt" | "native";

/**
 * Gas of real settlements, as the settler sends them (chains/factory-calls.ts `encodeSweep`: `deployAndSweep` for
 * one, a grouped `deployAndSweepBatch` for more): `n` payments of `token`, each with a fee, to `merchants`
 * round-robin (addresses that already hold the token, as merchants do, unless `freshMerchants`). Measured twice:
 * fresh wallets (deploy and sweep), then the same wallets paid again and re-swept (deployed: no deploy).
 * Balances are checked: every merchant gets exactly its payments minus fees, the fee recipient the fees.
 */
export async function measureBatchGas(fx: Fixture, opts: { token: GasToken; n: number; merchants?: number; freshMerchants?: boolean }) {
  const { accounts, walletOf, wait, factory } = fx;
  const token = opts.token === "native" ? NATIVE : opts.token === "usdt" ? fx.tokens.usdt : fx.tokens.usdc6;
  const settler = walletOf(accounts.settler);
  const amount = opts.token === "native" ? 10n ** 15n : 1_000_000n;
  const fee = amount / 100n;
  const tag = `gas-${opts.token}-${opts.n}-${Math.random()}`;
  const m = opts.freshMerchants ? opts.n : Math.min(opts.merchants ?? 5, opts.n);
  const merchants = Array.from({ length: m }, () => fx.freshAddress());
  // Merchants (unless fresh) and the fee recipient already hold the token: no first-balance storage write in the figures.
  await fx.payMany(token, opts.freshMerchants ? [accounts.feeRecipient.address] : [...merchants, accounts.feeRecipient.address], 1n);
  const reqs = Array.from({ length: opts.n }, (_, i) => ({
    salt: paymentSalt(`${tag}-${i}`),
    payout: merchants[i % m]!,
    token,
    fee,
    feeRecipient: accounts.feeRecipient.address,
  }));
  const wallets = reqs.map((r) => fx.walletAddress(r.salt, r.payout));
  const round = async () => {
    await fx.payMany(token, wallets, amount);
    const before = await Promise.all([...merchants, accounts.feeRecipient.address].map((a) => fx.balanceOf(token, a)));
    const r = await wait(settler.sendTransaction({ to: factory, data: encodeSweep(reqs) }));
    const after = await Promise.all([...merchants, accounts.feeRecipient.address].map((a) => fx.balanceOf(token, a)));
    for (const [j, mAddr] of merchants.entries()) {
      const expected = BigInt(reqs.filter((q) => q.payout === mAddr).length) * (amount - fee);
      if (after[j]! - before[j]! !== expected) throw new Error(`merchant ${mAddr} received ${after[j]! - before[j]!}, expected ${expected}`);
    }
    if (after[m]! - before[m]! !== BigInt(opts.n) * fee) throw new Error(`fee recipient received ${after[m]! - before[m]!}`);
    return r;
  };
  const fresh = await round();
  const resweep = await round();
  const deployed = fx.sweepEvents(fresh).deployed.length;
  if (deployed !== opts.n || fx.sweepEvents(resweep).deployed.length !== 0) throw new Error(`deployed ${deployed} of ${opts.n}, then redeployed`);
  return { fresh: fresh.gasUsed, resweep: resweep.gasUsed, perFresh: fresh.gasUsed / BigInt(opts.n), perResweep: resweep.gasUsed / BigInt(opts.n) };
}

/** The floor: one plain ERC-20 transfer transaction (6-decimal token) to an address that holds the token, and to a fresh one. */
export async function measureTransferFloor(fx: Fixture) {
  const { walletOf, accounts, wait, tokens } = fx;
  const payer = walletOf(accounts.payer);
  const holder = fx.freshAddress();
  await fx.payMany(tokens.usdc6, [holder], 1n);
  await wait(payer.writeContract({ address: tokens.usdc6, abi: testTokenAbi, functionName: "mint", args: [accounts.payer.address, 2_000_000n] }));
  const send = (to: Address) => wait(payer.writeContract({ address: tokens.usdc6, abi: testTokenAbi, functionName: "transfer", args: [to, 1_000_000n] }));
  return { toHolder: (await send(holder)).gasUsed, toFresh: (await send(fx.freshAddress())).gasUsed };
}
