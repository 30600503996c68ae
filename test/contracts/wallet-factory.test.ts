import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  encodeFunctionData,
  getAddress,
  parseEther,
  parseEventLogs,
  parseUnits,
  zeroAddress,
  type Address,
  type Hex,
  type TransactionReceipt,
} from "viem";
import { erc20Abi } from "../../abis/erc20.js";
import { forwarderWalletAbi } from "../../abis/ForwarderWallet.js";
import { reentrantPayoutAbi, reentrantPayoutBytecode } from "../../abis/ReentrantPayout.js";
import { walletFactoryAbi } from "../../abis/WalletFactory.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { gasTankSalt, implementationAddress, paymentSalt, vaultSalt } from "../../chains/deposit-address.js";
import { encodeSweep, groupForBatch, type SweepRequest } from "../../chains/factory-calls.js";
import { deployFixture, measureBatchGas, NATIVE, type Fixture } from "./fixture.js";

const CHAIN_ID = 31337;
let anvil: Anvil;
let fx: Fixture;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID, blockTime: 0 });
  fx = await deployFixture(anvil.rpcUrl, CHAIN_ID);
}, 30_000);
afterAll(async () => {
  await anvil?.stop();
});

/** The custom error name a call reverts with. */
async function revertName(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    const err = e instanceof BaseError ? e.walk((x) => x instanceof ContractFunctionRevertedError) : null;
    if (err instanceof ContractFunctionRevertedError) return err.data?.errorName ?? err.reason ?? "unknown";
    throw e;
  }
  throw new Error("expected a revert");
}

const sweepArgs = (salt: Hex, payout: Address, token: Address, fee: bigint, feeRecipient: Address) =>
  [salt, payout, token, fee, feeRecipient] as const;

/** The settler sends what the service sends (chains/factory-calls.ts). */
const settle = (reqs: readonly SweepRequest[], gas?: bigint) =>
  fx.wait(fx.walletOf(fx.accounts.settler).sendTransaction({ to: fx.factory, data: encodeSweep(reqs), gas }), gas !== undefined);

const simulateBatch = (account: Fixture["accounts"]["settler"], reqs: readonly SweepRequest[]) =>
  fx.pub.simulateContract({ account, address: fx.factory, abi: walletFactoryAbi, functionName: "deployAndSweepBatch", args: [groupForBatch(reqs)] });

/** ERC-20 Transfer logs of a receipt sent by `from`. */
const transfersFrom = (r: TransactionReceipt, from: Address) =>
  parseEventLogs({ abi: erc20Abi, logs: r.logs, eventName: "Transfer" }).filter((l) => getAddress(l.args.from) === getAddress(from));

const byWallet = <T extends { wallet: Address }>(xs: T[]) => [...xs].sort((a, b) => (a.wallet < b.wallet ? -1 : 1));

describe("WalletFactory addresses", () => {
  it("off-chain address == computeAddress == deployed address", async () => {
    const { pub, factory, implementation, walletOf, accounts } = fx;
    expect(implementation).toBe(implementationAddress(factory));
    const payout = fx.freshAddress();
    for (const salt of [paymentSalt("p-1"), vaultSalt("user-1", payout), gasTankSalt("m-1")]) {
      const onChain = await pub.readContract({ address: factory, abi: walletFactoryAbi, functionName: "computeAddress", args: [salt, payout] });
      expect(onChain).toBe(fx.walletAddress(salt, payout));
    }
    // The same salt with another payout is another address: the address commits to the payout.
    expect(fx.walletAddress(paymentSalt("p-1"), payout)).not.toBe(fx.walletAddress(paymentSalt("p-1"), fx.freshAddress()));
    // Anyone may deploy; a second deploy is a no-op.
    const salt = paymentSalt("deploy-by-anyone");
    const expected = fx.walletAddress(salt, payout);
    expect(await pub.getCode({ address: expected })).toBeUndefined();
    const stranger = walletOf(accounts.stranger);
    const { result } = await pub.simulateContract({ account: accounts.stranger, address: factory, abi: walletFactoryAbi, functionName: "deploy", args: [salt, payout] });
    expect(result).toBe(expected);
    const r = await fx.wait(stranger.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deploy", args: [salt, payout] }));
    expect(fx.sweepEvents(r).deployed).toEqual([{ wallet: expected, payout, salt }]);
    // A plain EIP-1167 clone: 45 bytes of code.
    expect((await pub.getCode({ address: expected }))?.length).toBe(2 + 2 * 45);
    expect(await pub.readContract({ address: expected, abi: forwarderWalletAbi, functionName: "factory" })).toBe(factory);
    const again = await fx.wait(stranger.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deploy", args: [salt, payout] }));
    expect(fx.sweepEvents(again).deployed).toEqual([]);
  });
});

describe("deployAndSweep", () => {
  const cases: { name: string; token: () => Address; amount: bigint; fee: bigint }[] = [
    { name: "6-decimal ERC-20", token: () => fx.tokens.usdc6, amount: parseUnits("125.5", 6), fee: parseUnits("0.35", 6) },
    { name: "18-decimal ERC-20", token: () => fx.tokens.dai18, amount: parseUnits("42", 18), fee: parseUnits("0.1", 18) },
    { name: "USDT-like token (transfer returns nothing)", token: () => fx.tokens.usdt, amount: parseUnits("10", 6), fee: parseUnits("1", 6) },
    { name: "native coin", token: () => NATIVE, amount: parseEther("1.5"), fee: parseEther("0.01") },
  ];
  for (const c of cases) {
    it(`sweeps a ${c.name} sent to the counterfactual address`, async () => {
      const { pub, walletOf, accounts, factory } = fx;
      const token = c.token();
      const payout = fx.freshAddress();
      const salt = paymentSalt(`sweep-${c.name}`);
      const wallet = fx.walletAddress(salt, payout);
      await fx.pay(token, wallet, c.amount);
      expect(await fx.balanceOf(token, wallet)).toBe(c.amount);
      expect(await pub.getCode({ address: wallet })).toBeUndefined();
      const feeBefore = await fx.balanceOf(token, accounts.feeRecipient.address);

      const args = sweepArgs(salt, payout, token, c.fee, accounts.feeRecipient.address);
      const sim = await pub.simulateContract({ account: accounts.settler, address: factory, abi: walletFactoryAbi, functionName: "deployAndSweep", args });
      expect(sim.result).toEqual([wallet, c.amount - c.fee]);
      const r = await fx.wait(walletOf(accounts.settler).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deployAndSweep", args }));

      expect(await fx.balanceOf(token, payout)).toBe(c.amount - c.fee);
      expect((await fx.balanceOf(token, accounts.feeRecipient.address)) - feeBefore).toBe(c.fee);
      expect(await fx.balanceOf(token, wallet)).toBe(0n);
      expect(await fx.balanceOf(token, factory)).toBe(0n);
      const ev = fx.sweepEvents(r);
      expect(ev.deployed).toEqual([{ wallet, payout, salt }]);
      expect(ev.swept).toEqual([{ wallet, token, payout, amount: c.amount - c.fee, fee: c.fee, feeRecipient: accounts.feeRecipient.address }]);
      // One sweep alone pays straight from the wallet: the fee recipient and the payout, nothing through the factory.
      if (token !== NATIVE) expect(transfersFrom(r, wallet).map((l) => [getAddress(l.args.to), l.args.value])).toEqual([[accounts.feeRecipient.address, c.fee], [payout, c.amount - c.fee]]);

      // A second payment to the now deployed wallet (the native coin goes through the clone's receive): not redeployed.
      await fx.pay(token, wallet, c.amount);
      const r2 = await fx.wait(walletOf(accounts.settler).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deployAndSweep", args: sweepArgs(salt, payout, token, 0n, zeroAddress) }));
      expect(await fx.balanceOf(token, payout)).toBe(2n * c.amount - c.fee);
      const ev2 = fx.sweepEvents(r2);
      expect(ev2.deployed).toEqual([]);
      expect(ev2.swept).toEqual([{ wallet, token, payout, amount: c.amount, fee: 0n, feeRecipient: zeroAddress }]);
    });
  }

  it("sweeps a whole balance into the fee (fee == balance)", async () => {
    const { accounts, factory, pub } = fx;
    const payout = fx.freshAddress();
    const salt = paymentSalt("fee-equals-balance");
    await fx.pay(fx.tokens.usdc6, fx.walletAddress(salt, payout), 500n);
    const sim = await pub.simulateContract({ account: accounts.settler, address: factory, abi: walletFactoryAbi, functionName: "deployAndSweep", args: sweepArgs(salt, payout, fx.tokens.usdc6, 500n, accounts.feeRecipient.address) });
    expect(sim.result[1]).toBe(0n);
  });

  it("refuses a non-settler, a fee recipient not allow-listed, fee > balance and an empty wallet", async () => {
    const { pub, accounts, factory, tokens } = fx;
    const payout = fx.freshAddress();
    const salt = paymentSalt("refusals");
    await fx.pay(tokens.usdt, fx.walletAddress(salt, payout), 1000n);
    const sim = (account: typeof accounts.settler, args: ReturnType<typeof sweepArgs>) =>
      pub.simulateContract({ account, address: factory, abi: walletFactoryAbi, functionName: "deployAndSweep", args });
    const ok = sweepArgs(salt, payout, tokens.usdt, 10n, accounts.feeRecipient.address);
    expect(await revertName(sim(accounts.stranger, ok))).toBe("NotSettler");
    expect(await revertName(sim(accounts.payer, ok))).toBe("NotSettler");
    expect(await revertName(sim(accounts.settler, sweepArgs(salt, payout, tokens.usdt, 10n, accounts.stranger.address)))).toBe("FeeRecipientNotAllowed");
    expect(await revertName(sim(accounts.settler, sweepArgs(salt, payout, tokens.usdt, 1001n, accounts.feeRecipient.address)))).toBe("FeeExceedsBalance");
    expect(await revertName(sim(accounts.settler, sweepArgs(salt, payout, tokens.usdc6, 0n, zeroAddress)))).toBe("NothingToSweep");
    expect(await revertName(sim(accounts.settler, sweepArgs(salt, payout, NATIVE, 0n, zeroAddress)))).toBe("NothingToSweep");
    // A real transaction from a non-settler is mined as reverted and moves nothing.
    const r = await fx.wait(fx.walletOf(accounts.stranger).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deployAndSweep", args: ok, gas: 500_000n }), true);
    expect(r.status).toBe("reverted");
    expect(await fx.balanceOf(tokens.usdt, fx.walletAddress(salt, payout))).toBe(1000n);
  });

  it("lets only the factory move a wallet's funds, and the factory takes no stray native coin", async () => {
    const { pub, accounts, factory, tokens } = fx;
    const payout = fx.freshAddress();
    const salt = paymentSalt("only-factory");
    const wallet = fx.walletAddress(salt, payout);
    await fx.pay(tokens.usdc6, wallet, 1000n);
    await fx.wait(fx.walletOf(accounts.stranger).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deploy", args: [salt, payout] }));
    for (const account of [accounts.stranger, accounts.settler, accounts.owner]) {
      expect(await revertName(pub.simulateContract({ account, address: wallet, abi: forwarderWalletAbi, functionName: "sweep", args: [tokens.usdc6, 0n, zeroAddress, account.address] }))).toBe("NotFactory");
      expect(await revertName(pub.simulateContract({ account, address: wallet, abi: forwarderWalletAbi, functionName: "sweepToFactory", args: [tokens.usdc6] }))).toBe("NotFactory");
    }
    await expect(pub.call({ account: accounts.stranger, to: factory, value: 1n })).rejects.toThrow();
    expect(await fx.balanceOf(tokens.usdc6, wallet)).toBe(1000n);
  });
});

describe("deployAndSweepBatch", () => {
  it("pays each merchant and each fee recipient once per token, exact amounts, one Swept per wallet, deploys only what has no code", async () => {
    const { accounts, factory, tokens, walletOf } = fx;
    const secondFeeRecipient = fx.freshAddress();
    await fx.wait(walletOf(accounts.owner).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "setFeeRecipient", args: [secondFeeRecipient, true] }));
    const merchants = [fx.freshAddress(), fx.freshAddress(), fx.freshAddress()];
    const all = [tokens.usdc6, tokens.dai18, tokens.usdt, NATIVE];
    const reqs: (SweepRequest & { amount: bigint })[] = [];
    for (let i = 0; i < 16; i++) {
      const token = all[i % all.length]!;
      const feeRecipient = i % 5 === 0 ? secondFeeRecipient : i % 7 === 0 ? zeroAddress : accounts.feeRecipient.address;
      const fee = feeRecipient === zeroAddress ? 0n : BigInt(1000 + i);
      reqs.push({ salt: paymentSalt(`mixed-${i}`), payout: merchants[(i * 7) % 3]!, token, fee, feeRecipient, amount: 1_000_000n + BigInt(i) });
    }
    // Two of the wallets are already deployed (anyone may deploy): swept without deploying.
    const predeployed = [reqs[1]!, reqs[6]!];
    for (const q of predeployed) await fx.wait(walletOf(accounts.stranger).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deploy", args: [q.salt, q.payout] }));
    for (const q of reqs) await fx.pay(q.token, fx.walletAddress(q.salt, q.payout), q.amount);
    const holders = [...merchants, accounts.feeRecipient.address, secondFeeRecipient];
    const before = await Promise.all(all.map((t) => Promise.all(holders.map((h) => fx.balanceOf(t, h)))));

    const r = await settle(reqs);

    for (const [ti, t] of all.entries())
      for (const [hi, h] of holders.entries()) {
        const got = (await fx.balanceOf(t, h)) - before[ti]![hi]!;
        const ofToken = reqs.filter((q) => q.token === t);
        const expected =
          ofToken.filter((q) => q.payout === h).reduce((a, q) => a + q.amount - q.fee, 0n) +
          ofToken.filter((q) => q.feeRecipient === h).reduce((a, q) => a + q.fee, 0n);
        expect(got, `${h} of ${t}`).toBe(expected);
      }
    for (const q of reqs) expect(await fx.balanceOf(q.token, fx.walletAddress(q.salt, q.payout))).toBe(0n);
    for (const t of all) expect(await fx.balanceOf(t, factory)).toBe(0n);

    const ev = fx.sweepEvents(r);
    expect(byWallet(ev.swept)).toEqual(
      byWallet(reqs.map((q) => ({ wallet: fx.walletAddress(q.salt, q.payout), token: q.token, payout: q.payout, amount: q.amount - q.fee, fee: q.fee, feeRecipient: q.feeRecipient }))),
    );
    const fresh = reqs.filter((q) => !predeployed.includes(q));
    expect(byWallet(ev.deployed)).toEqual(byWallet(fresh.map((q) => ({ wallet: fx.walletAddress(q.salt, q.payout), payout: q.payout, salt: q.salt }))));
    // The factory's own transfers: one per run of consecutive wallets with the same (token, payout), and with the same
    // (token, fee recipient), in the order groupForBatch sends them (a merchant named with two fee recipients of one
    // token is in two groups: up to one transfer per group).
    const seq = groupForBatch(reqs)
      .filter((g) => g.token !== NATIVE)
      .flatMap((g) => g.sweeps.map((w) => ({ token: g.token, payout: w.payout, feeRecipient: g.feeRecipient, fee: w.fee })));
    const runs = (keys: string[]) => keys.filter((k, i) => k !== keys[i - 1]).length;
    const expectedTransfers =
      runs(seq.map((x) => `${x.token}:${x.payout}`)) + runs(seq.filter((x) => x.fee > 0n).map((x) => `${x.token}:${x.feeRecipient}`));
    expect(transfersFrom(r, factory)).toHaveLength(expectedTransfers);
  });

  it("with one fee recipient, pays each merchant once per token and the fee recipient once per token", async () => {
    const { accounts, factory, tokens } = fx;
    const merchants = [fx.freshAddress(), fx.freshAddress(), fx.freshAddress()];
    const reqs: SweepRequest[] = [];
    for (let i = 0; i < 12; i++) {
      const token = i % 2 ? tokens.usdt : tokens.usdc6;
      // Fee-less payments (Gas Tank mode) name the fee recipient too, as the settler does.
      reqs.push({ salt: paymentSalt(`once-${i}`), payout: merchants[i % 3]!, token, fee: i % 4 === 0 ? 0n : 50n, feeRecipient: accounts.feeRecipient.address });
    }
    for (const q of reqs) await fx.pay(q.token, fx.walletAddress(q.salt, q.payout), 10_000n);
    const r = await settle(reqs);
    const paid = transfersFrom(r, factory).map((l) => `${getAddress(l.address)}:${getAddress(l.args.to)}`);
    expect(paid.sort()).toEqual(
      [tokens.usdc6, tokens.usdt].flatMap((t) => [...merchants, accounts.feeRecipient.address].map((m) => `${t}:${m}`)).sort(),
    );
    for (const m of merchants)
      for (const t of [tokens.usdc6, tokens.usdt]) {
        const mine = reqs.filter((q) => q.payout === m && q.token === t);
        expect(await fx.balanceOf(t, m)).toBe(mine.reduce((a, q) => a + 10_000n - q.fee, 0n));
      }
  });

  it("pays exact amounts whatever the order of the requests (unsorted: more transfers, same amounts)", async () => {
    const { accounts, factory, tokens, walletOf } = fx;
    const [a, b] = [fx.freshAddress(), fx.freshAddress()];
    const reqs = [a, b, a, b, a].map((payout, i) => ({ salt: paymentSalt(`unsorted-${i}`), payout, fee: 100n }));
    for (const q of reqs) await fx.pay(tokens.usdt, fx.walletAddress(q.salt, q.payout), 10_000n);
    const r = await fx.wait(walletOf(accounts.settler).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deployAndSweepBatch", args: [[{ token: tokens.usdt, feeRecipient: accounts.feeRecipient.address, sweeps: reqs }]] }));
    expect(await fx.balanceOf(tokens.usdt, a)).toBe(3n * 9_900n);
    expect(await fx.balanceOf(tokens.usdt, b)).toBe(2n * 9_900n);
    expect(await fx.balanceOf(tokens.usdt, factory)).toBe(0n);
    expect(transfersFrom(r, factory)).toHaveLength(5 + 1);
  });

  it("refuses a non-settler, a fee recipient not allow-listed, fee > balance and an empty wallet", async () => {
    const { accounts, tokens } = fx;
    const reqs: SweepRequest[] = [];
    for (let i = 0; i < 3; i++) {
      const salt = paymentSalt(`batch-refusals-${i}`);
      const payout = fx.freshAddress();
      await fx.pay(tokens.usdc6, fx.walletAddress(salt, payout), 100n);
      reqs.push({ salt, payout, token: tokens.usdc6, fee: 1n, feeRecipient: accounts.feeRecipient.address });
    }
    expect(await revertName(simulateBatch(accounts.stranger, reqs))).toBe("NotSettler");
    expect(await revertName(simulateBatch(accounts.owner, reqs))).toBe("NotSettler");
    expect(await revertName(simulateBatch(accounts.settler, [...reqs.slice(0, 2), { ...reqs[2]!, feeRecipient: accounts.stranger.address }]))).toBe("FeeRecipientNotAllowed");
    expect(await revertName(simulateBatch(accounts.settler, [...reqs.slice(0, 2), { ...reqs[2]!, fee: 101n }]))).toBe("FeeExceedsBalance");
    expect(await revertName(simulateBatch(accounts.settler, [...reqs, { ...reqs[0]!, token: tokens.dai18 }]))).toBe("NothingToSweep");
    expect(await revertName(simulateBatch(accounts.settler, [...reqs, { ...reqs[0]!, token: NATIVE, fee: 0n }]))).toBe("NothingToSweep");
    // The same wallet twice: the second finds it empty.
    expect(await revertName(simulateBatch(accounts.settler, [...reqs, reqs[0]!]))).toBe("NothingToSweep");
    await simulateBatch(accounts.settler, reqs);
  });

  it("is atomic: one bad request reverts them all", async () => {
    const { pub, accounts, tokens } = fx;
    const reqs: SweepRequest[] = [];
    for (let i = 0; i < 3; i++) {
      const salt = paymentSalt(`atomic-${i}`);
      const payout = fx.freshAddress();
      await fx.pay(tokens.usdc6, fx.walletAddress(salt, payout), 100n);
      reqs.push({ salt, payout, token: tokens.usdc6, fee: i === 2 ? 101n : 1n, feeRecipient: accounts.feeRecipient.address });
    }
    const r = await settle(reqs, 2_000_000n);
    expect(r.status).toBe("reverted");
    for (const q of reqs) {
      const wallet = fx.walletAddress(q.salt, q.payout);
      expect(await pub.getCode({ address: wallet })).toBeUndefined();
      expect(await fx.balanceOf(tokens.usdc6, wallet)).toBe(100n);
      expect(await fx.balanceOf(tokens.usdc6, q.payout)).toBe(0n);
    }
  });

  it("a native payout that re-enters the factory gets nowhere, even as a settler; everyone is paid exactly", async () => {
    const { accounts, factory, tokens, walletOf, pub } = fx;
    const owner = walletOf(accounts.owner);
    const hash = await owner.deployContract({ abi: reentrantPayoutAbi, bytecode: reentrantPayoutBytecode });
    const attacker = getAddress((await fx.wait(hash)).contractAddress!);
    // A victim wallet still funded when the attacker is paid (its payout is someone else).
    const victim = { salt: paymentSalt("reentry-victim"), payout: fx.freshAddress() };
    await fx.pay(tokens.usdc6, fx.walletAddress(victim.salt, victim.payout), 5_000n);
    // The worst case: the attacker is a settler itself, so only the reentrancy guard stands in its way.
    await fx.wait(owner.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "setSettler", args: [attacker, true] }));
    const steal = encodeFunctionData({ abi: walletFactoryAbi, functionName: "deployAndSweep", args: [victim.salt, victim.payout, tokens.usdc6, 5_000n, accounts.feeRecipient.address] });
    await fx.wait(walletOf(accounts.stranger).writeContract({ address: attacker, abi: reentrantPayoutAbi, functionName: "arm", args: [factory, steal] }));
    try {
      const reqs: SweepRequest[] = [
        { salt: paymentSalt("reentry-native"), payout: attacker, token: NATIVE, fee: 10n, feeRecipient: accounts.feeRecipient.address },
        { salt: paymentSalt("reentry-native-2"), payout: attacker, token: NATIVE, fee: 10n, feeRecipient: accounts.feeRecipient.address },
        { salt: paymentSalt("reentry-erc20"), payout: fx.freshAddress(), token: tokens.usdc6, fee: 10n, feeRecipient: accounts.feeRecipient.address },
      ];
      for (const q of reqs) await fx.pay(q.token, fx.walletAddress(q.salt, q.payout), 1_000n);
      await settle(reqs);
      expect(await pub.getBalance({ address: attacker })).toBe(2n * 990n);
      expect(await fx.balanceOf(tokens.usdc6, reqs[2]!.payout)).toBe(990n);
      expect(await pub.readContract({ address: attacker, abi: reentrantPayoutAbi, functionName: "calls" })).toBe(1n);
      expect(await pub.readContract({ address: attacker, abi: reentrantPayoutAbi, functionName: "lastOk" })).toBe(false);
      const result = await pub.readContract({ address: attacker, abi: reentrantPayoutAbi, functionName: "lastResult" });
      expect(decodeErrorResult({ abi: walletFactoryAbi, data: result }).errorName).toBe("ReentrancyGuardReentrantCall");
      expect(await fx.balanceOf(tokens.usdc6, fx.walletAddress(victim.salt, victim.payout))).toBe(5_000n);
      expect(await pub.getBalance({ address: factory })).toBe(0n);
    } finally {
      await fx.wait(owner.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "setSettler", args: [attacker, false] }));
    }
  });
});

describe("returnFunds", () => {
  const returnArgs = (salt: Hex, payout: Address, token: Address, to: Address, amount: bigint) => [salt, payout, token, to, amount] as const;
  const returnEvents = (r: TransactionReceipt) => parseEventLogs({ abi: walletFactoryAbi, logs: r.logs, eventName: "FundsReturned" }).map((l) => l.args);
  const simulateReturn = (account: Fixture["accounts"]["owner"], args: ReturnType<typeof returnArgs>) =>
    fx.pub.simulateContract({ account, address: fx.factory, abi: walletFactoryAbi, functionName: "returnFunds", args });

  const cases: { name: string; token: () => Address; paid: bigint; back: bigint }[] = [
    { name: "6-decimal ERC-20", token: () => fx.tokens.usdc6, paid: parseUnits("125.5", 6), back: parseUnits("100", 6) },
    { name: "USDT-like token (transfer returns nothing)", token: () => fx.tokens.usdt, paid: parseUnits("10", 6), back: parseUnits("7.25", 6) },
    { name: "native coin", token: () => NATIVE, paid: parseEther("1.5"), back: parseEther("1") },
  ];
  for (const c of cases) {
    it(`the owner sends exactly an amount of a ${c.name} to an address of its choice; the rest stays, deployed or not`, async () => {
      const { pub, walletOf, accounts, factory } = fx;
      const token = c.token();
      const payout = fx.freshAddress();
      const to = fx.freshAddress();
      const salt = paymentSalt(`return-${c.name}`);
      const wallet = fx.walletAddress(salt, payout);
      await fx.pay(token, wallet, c.paid);
      expect(await pub.getCode({ address: wallet })).toBeUndefined();

      const args = returnArgs(salt, payout, token, to, c.back);
      expect((await simulateReturn(accounts.owner, args)).result).toBe(wallet);
      const r = await fx.wait(walletOf(accounts.owner).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "returnFunds", args }));
      expect(await fx.balanceOf(token, to)).toBe(c.back);
      expect(await fx.balanceOf(token, wallet)).toBe(c.paid - c.back);
      expect(await fx.balanceOf(token, payout)).toBe(0n);
      expect(await fx.balanceOf(token, factory)).toBe(0n);
      expect(fx.sweepEvents(r)).toEqual({ deployed: [{ wallet, payout, salt }], swept: [] });
      expect(returnEvents(r)).toEqual([{ wallet, token, to, amount: c.back, payout, salt }]);
      // Straight from the wallet to `to`: one transfer, nothing through the factory.
      if (token !== NATIVE) expect(transfersFrom(r, wallet).map((l) => [getAddress(l.args.to), l.args.value])).toEqual([[to, c.back]]);
      if (token !== NATIVE) expect(transfersFrom(r, factory)).toEqual([]);

      // Again, from the now deployed wallet: the rest, to the last unit; not redeployed.
      const r2 = await fx.wait(walletOf(accounts.owner).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "returnFunds", args: returnArgs(salt, payout, token, to, c.paid - c.back) }));
      expect(await fx.balanceOf(token, to)).toBe(c.paid);
      expect(await fx.balanceOf(token, wallet)).toBe(0n);
      expect(fx.sweepEvents(r2).deployed).toEqual([]);
      expect(returnEvents(r2)).toEqual([{ wallet, token, to, amount: c.paid - c.back, payout, salt }]);
      // Now empty: nothing more to return.
      expect(await revertName(simulateReturn(accounts.owner, returnArgs(salt, payout, token, to, 1n)))).toBe("AmountExceedsBalance");
    });
  }

  it("refuses a settler, a stranger, to = 0 or the factory, amount 0 and amount > balance; moves nothing", async () => {
    const { accounts, factory, tokens, pub } = fx;
    const payout = fx.freshAddress();
    const to = fx.freshAddress();
    const salt = paymentSalt("return-refusals");
    const wallet = fx.walletAddress(salt, payout);
    await fx.pay(tokens.usdt, wallet, 1000n);
    await fx.pay(NATIVE, wallet, 1000n);
    for (const token of [tokens.usdt, NATIVE]) {
      const ok = returnArgs(salt, payout, token, to, 1000n);
      expect(await revertName(simulateReturn(accounts.settler, ok))).toBe("OwnableUnauthorizedAccount");
      expect(await revertName(simulateReturn(accounts.stranger, ok))).toBe("OwnableUnauthorizedAccount");
      expect(await revertName(simulateReturn(accounts.owner, returnArgs(salt, payout, token, zeroAddress, 1000n)))).toBe("ZeroAddress");
      expect(await revertName(simulateReturn(accounts.owner, returnArgs(salt, zeroAddress, token, to, 1000n)))).toBe("ZeroAddress");
      expect(await revertName(simulateReturn(accounts.owner, returnArgs(salt, payout, token, factory, 1000n)))).toBe("InvalidRecipient");
      expect(await revertName(simulateReturn(accounts.owner, returnArgs(salt, payout, token, to, 0n)))).toBe("NothingToSweep");
      expect(await revertName(simulateReturn(accounts.owner, returnArgs(salt, payout, token, to, 1001n)))).toBe("AmountExceedsBalance");
      await simulateReturn(accounts.owner, ok);
    }
    // A token the wallet holds none of.
    expect(await revertName(simulateReturn(accounts.owner, returnArgs(salt, payout, tokens.usdc6, to, 1n)))).toBe("AmountExceedsBalance");
    // A real transaction from the settler is mined as reverted and moves nothing.
    const r = await fx.wait(fx.walletOf(accounts.settler).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "returnFunds", args: returnArgs(salt, payout, tokens.usdt, accounts.settler.address, 1000n), gas: 500_000n }), true);
    expect(r.status).toBe("reverted");
    expect(await fx.balanceOf(tokens.usdt, wallet)).toBe(1000n);
    expect(await pub.getBalance({ address: wallet })).toBe(1000n);
    expect(await pub.getCode({ address: wallet })).toBeUndefined();
  });

  it("transferOut moves nothing unless the factory calls it", async () => {
    const { pub, accounts, factory, tokens } = fx;
    const payout = fx.freshAddress();
    const salt = paymentSalt("return-only-factory");
    const wallet = fx.walletAddress(salt, payout);
    await fx.pay(tokens.usdc6, wallet, 1000n);
    await fx.pay(NATIVE, wallet, 1000n);
    await fx.wait(fx.walletOf(accounts.stranger).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deploy", args: [salt, payout] }));
    for (const account of [accounts.stranger, accounts.settler, accounts.owner])
      for (const token of [tokens.usdc6, NATIVE])
        expect(await revertName(pub.simulateContract({ account, address: wallet, abi: forwarderWalletAbi, functionName: "transferOut", args: [token, account.address, 1000n] }))).toBe("NotFactory");
    expect(await fx.balanceOf(tokens.usdc6, wallet)).toBe(1000n);
    expect(await pub.getBalance({ address: wallet })).toBe(1000n);
  });

  it("a native `to` that re-enters the factory gets nowhere, even as a settler", async () => {
    const { accounts, factory, tokens, walletOf, pub } = fx;
    const owner = walletOf(accounts.owner);
    const attacker = getAddress((await fx.wait(owner.deployContract({ abi: reentrantPayoutAbi, bytecode: reentrantPayoutBytecode }))).contractAddress!);
    const victim = { salt: paymentSalt("return-reentry-victim"), payout: fx.freshAddress() };
    await fx.pay(tokens.usdc6, fx.walletAddress(victim.salt, victim.payout), 5_000n);
    await fx.wait(owner.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "setSettler", args: [attacker, true] }));
    const steal = encodeFunctionData({ abi: walletFactoryAbi, functionName: "deployAndSweep", args: [victim.salt, victim.payout, tokens.usdc6, 5_000n, accounts.feeRecipient.address] });
    await fx.wait(walletOf(accounts.stranger).writeContract({ address: attacker, abi: reentrantPayoutAbi, functionName: "arm", args: [factory, steal] }));
    try {
      const salt = paymentSalt("return-reentry");
      const payout = fx.freshAddress();
      await fx.pay(NATIVE, fx.walletAddress(salt, payout), 1_000n);
      await fx.wait(owner.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "returnFunds", args: returnArgs(salt, payout, NATIVE, attacker, 600n) }));
      expect(await pub.getBalance({ address: attacker })).toBe(600n);
      expect(await pub.getBalance({ address: fx.walletAddress(salt, payout) })).toBe(400n);
      expect(await pub.readContract({ address: attacker, abi: reentrantPayoutAbi, functionName: "lastOk" })).toBe(false);
      const result = await pub.readContract({ address: attacker, abi: reentrantPayoutAbi, functionName: "lastResult" });
      expect(decodeErrorResult({ abi: walletFactoryAbi, data: result }).errorName).toBe("ReentrancyGuardReentrantCall");
      expect(await fx.balanceOf(tokens.usdc6, fx.walletAddress(victim.salt, victim.payout))).toBe(5_000n);
      expect(await pub.getBalance({ address: factory })).toBe(0n);
    } finally {
      await fx.wait(owner.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "setSettler", args: [attacker, false] }));
    }
  });
});

describe("WalletFactory admin", () => {
  it("is owner-only and transfers ownership", async () => {
    const { pub, accounts, factory, walletOf } = fx;
    const read = (functionName: "isSettler" | "isFeeRecipient", a: Address) => pub.readContract({ address: factory, abi: walletFactoryAbi, functionName, args: [a] });
    expect(await pub.readContract({ address: factory, abi: walletFactoryAbi, functionName: "owner" })).toBe(accounts.owner.address);
    expect(await read("isSettler", accounts.settler.address)).toBe(true);
    expect(await read("isSettler", accounts.stranger.address)).toBe(false);
    expect(await read("isFeeRecipient", accounts.feeRecipient.address)).toBe(true);
    for (const functionName of ["setSettler", "setFeeRecipient"] as const) {
      expect(await revertName(pub.simulateContract({ account: accounts.stranger, address: factory, abi: walletFactoryAbi, functionName, args: [accounts.stranger.address, true] }))).toBe("OwnableUnauthorizedAccount");
    }
    const owner = walletOf(accounts.owner);
    await fx.wait(owner.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "setSettler", args: [accounts.stranger.address, true] }));
    expect(await read("isSettler", accounts.stranger.address)).toBe(true);
    await fx.wait(owner.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "setSettler", args: [accounts.stranger.address, false] }));
    expect(await read("isSettler", accounts.stranger.address)).toBe(false);

    await fx.wait(owner.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "transferOwnership", args: [accounts.stranger.address] }));
    expect(await pub.readContract({ address: factory, abi: walletFactoryAbi, functionName: "owner" })).toBe(accounts.stranger.address);
    expect(await revertName(pub.simulateContract({ account: accounts.owner, address: factory, abi: walletFactoryAbi, functionName: "setSettler", args: [accounts.owner.address, true] }))).toBe("OwnableUnauthorizedAccount");
    await fx.wait(walletOf(accounts.stranger).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "transferOwnership", args: [accounts.owner.address] }));
  });
});

// Gas is deterministic on a given EVM: these are budgets, not timings (bench/sweep-gas.ts prints the whole table).
describe("gas", () => {
  it("ERC-20 and USDT-like in batches of 50: <= 60k per payment (fresh wallets), <= 45k per re-sweep", { timeout: 300_000 }, async () => {
    for (const token of ["erc20", "usdt"] as const) {
      const g = await measureBatchGas(fx, { token, n: 50 });
      console.log(`[gas] ${token} batch of 50: ${g.perFresh} per payment fresh, ${g.perResweep} per re-sweep`);
      expect(g.perFresh).toBeLessThanOrEqual(60_000n);
      expect(g.perResweep).toBeLessThanOrEqual(45_000n);
    }
  });

  it("returnFunds of an ERC-20 (6 decimals) to a holder, part of the balance: <= 60k from a deployed wallet, <= 110k with the deploy", async () => {
    const { accounts, walletOf, factory, tokens } = fx;
    const owner = walletOf(accounts.owner);
    const to = fx.freshAddress();
    await fx.payMany(tokens.usdc6, [to], 1n);
    const salt = paymentSalt(`gas-return-${Math.random()}`);
    const payout = fx.freshAddress();
    const wallet = fx.walletAddress(salt, payout);
    await fx.pay(tokens.usdc6, wallet, 3_000_000n);
    const send = () => fx.wait(owner.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "returnFunds", args: [salt, payout, tokens.usdc6, to, 1_000_000n] }));
    const fresh = await send();
    const deployed = await send();
    expect(fx.sweepEvents(fresh).deployed).toHaveLength(1);
    expect(fx.sweepEvents(deployed).deployed).toHaveLength(0);
    console.log(`[gas] returnFunds erc20: ${fresh.gasUsed} with the deploy, ${deployed.gasUsed} from a deployed wallet`);
    expect(deployed.gasUsed).toBeLessThanOrEqual(60_000n);
    expect(fresh.gasUsed).toBeLessThanOrEqual(110_000n);
  });

  it("batching pays: a batch of 10 costs less per payment than single sweeps, for every kind of token", { timeout: 300_000 }, async () => {
    for (const token of ["erc20", "usdt", "native"] as const) {
      const one = await measureBatchGas(fx, { token, n: 1 });
      const ten = await measureBatchGas(fx, { token, n: 10 });
      console.log(`[gas] ${token}: single ${one.perFresh} (re-sweep ${one.perResweep}), batch of 10 ${ten.perFresh} (re-sweep ${ten.perResweep}) per payment`);
      expect(one.perFresh).toBeLessThan(110_000n);
      expect(ten.perFresh * 10n).toBeLessThan(one.perFresh * 7n);
      expect(ten.perResweep * 10n).toBeLessThan(one.perResweep * 5n);
    }
  });
});
