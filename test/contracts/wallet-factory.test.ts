import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BaseError, ContractFunctionRevertedError, parseEther, parseUnits, zeroAddress, type Address, type Hex } from "viem";
import { forwarderWalletAbi } from "../../abis/ForwarderWallet.js";
import { walletFactoryAbi } from "../../abis/WalletFactory.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { gasTankSalt, implementationAddress, paymentSalt, vaultSalt } from "../../chains/deposit-address.js";
import { deployFixture, measureSweepGas, NATIVE, type Fixture } from "./fixture.js";

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

describe("WalletFactory addresses", () => {
  it("off-chain address == computeAddress == deployed address", async () => {
    const { pub, factory, implementation, walletOf, accounts } = fx;
    expect(implementation).toBe(implementationAddress(factory));
    const payout = fx.freshAddress();
    for (const salt of [paymentSalt("p-1"), vaultSalt("user-1", payout), gasTankSalt("m-1")]) {
      const onChain = await pub.readContract({ address: factory, abi: walletFactoryAbi, functionName: "computeAddress", args: [salt, payout] });
      expect(onChain).toBe(fx.walletAddress(salt, payout));
    }
    // Anyone may deploy; a second deploy is a no-op.
    const salt = paymentSalt("deploy-by-anyone");
    const expected = fx.walletAddress(salt, payout);
    expect(await pub.getCode({ address: expected })).toBeUndefined();
    const stranger = walletOf(accounts.stranger);
    const { result } = await pub.simulateContract({ account: accounts.stranger, address: factory, abi: walletFactoryAbi, functionName: "deploy", args: [salt, payout] });
    expect(result).toBe(expected);
    const r = await fx.wait(stranger.writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deploy", args: [salt, payout] }));
    expect(fx.sweepEvents(r).deployed).toEqual([{ wallet: expected, payout, salt }]);
    expect((await pub.getCode({ address: expected }))?.length).toBe(2 + 2 * (45 + 20));
    expect(await pub.readContract({ address: expected, abi: forwarderWalletAbi, functionName: "payout" })).toBe(payout);
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
      const ev = fx.sweepEvents(r);
      expect(ev.deployed).toEqual([{ wallet, payout, salt }]);
      expect(ev.swept).toEqual([{ wallet, token, payout, amount: c.amount - c.fee, fee: c.fee, feeRecipient: accounts.feeRecipient.address }]);

      // A second payment to the now deployed wallet (the native coin goes through the clone's receive).
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
    expect(await revertName(pub.simulateContract({ account: accounts.stranger, address: factory, abi: walletFactoryAbi, functionName: "deployAndSweepBatch", args: [[{ salt, payout, token: tokens.usdt, fee: 0n, feeRecipient: zeroAddress }]] }))).toBe("NotSettler");
    expect(await revertName(sim(accounts.settler, sweepArgs(salt, payout, tokens.usdt, 10n, accounts.stranger.address)))).toBe("FeeRecipientNotAllowed");
    expect(await revertName(sim(accounts.settler, sweepArgs(salt, payout, tokens.usdt, 1001n, accounts.feeRecipient.address)))).toBe("FeeExceedsBalance");
    expect(await revertName(sim(accounts.settler, sweepArgs(salt, payout, tokens.usdc6, 0n, zeroAddress)))).toBe("NothingToSweep");
    expect(await revertName(sim(accounts.settler, sweepArgs(salt, payout, NATIVE, 0n, zeroAddress)))).toBe("NothingToSweep");
    // A real transaction from a non-settler is mined as reverted and moves nothing.
    const r = await fx.wait(fx.walletOf(accounts.stranger).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deployAndSweep", args: ok, gas: 500_000n }), true);
    expect(r.status).toBe("reverted");
    expect(await fx.balanceOf(tokens.usdt, fx.walletAddress(salt, payout))).toBe(1000n);
  });

  it("lets only the factory move a wallet's funds", async () => {
    const { pub, accounts, factory, tokens } = fx;
    const payout = fx.freshAddress();
    const salt = paymentSalt("only-factory");
    const wallet = fx.walletAddress(salt, payout);
    await fx.pay(tokens.usdc6, wallet, 1000n);
    await fx.wait(fx.walletOf(accounts.stranger).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deploy", args: [salt, payout] }));
    for (const account of [accounts.stranger, accounts.settler, accounts.owner]) {
      expect(await revertName(pub.simulateContract({ account, address: wallet, abi: forwarderWalletAbi, functionName: "sweep", args: [tokens.usdc6, 0n, zeroAddress] }))).toBe("NotFactory");
    }
  });
});

describe("deployAndSweepBatch", () => {
  it("sweeps 10 wallets in one transaction", async () => {
    const { accounts, factory, tokens } = fx;
    const all = [tokens.usdc6, tokens.dai18, tokens.usdt, NATIVE];
    const reqs = [];
    for (let i = 0; i < 10; i++) {
      const token = all[i % all.length]!;
      const salt = paymentSalt(`batch-${i}`);
      const payout = fx.freshAddress();
      await fx.pay(token, fx.walletAddress(salt, payout), 1_000_000n + BigInt(i));
      reqs.push({ salt, payout, token, fee: BigInt(i), feeRecipient: accounts.feeRecipient.address });
    }
    const r = await fx.wait(fx.walletOf(accounts.settler).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deployAndSweepBatch", args: [reqs] }));
    const ev = fx.sweepEvents(r);
    expect(ev.deployed).toHaveLength(10);
    expect(ev.swept).toHaveLength(10);
    for (const [i, q] of reqs.entries()) {
      expect(await fx.balanceOf(q.token, q.payout)).toBe(1_000_000n);
      expect(ev.swept[i]).toEqual({ wallet: fx.walletAddress(q.salt, q.payout), token: q.token, payout: q.payout, amount: 1_000_000n, fee: BigInt(i), feeRecipient: accounts.feeRecipient.address });
    }
  });

  it("is atomic: one bad request reverts them all", async () => {
    const { pub, accounts, factory, tokens } = fx;
    const reqs = [];
    for (let i = 0; i < 3; i++) {
      const salt = paymentSalt(`atomic-${i}`);
      const payout = fx.freshAddress();
      await fx.pay(tokens.usdc6, fx.walletAddress(salt, payout), 100n);
      reqs.push({ salt, payout, token: tokens.usdc6, fee: i === 2 ? 101n : 1n, feeRecipient: accounts.feeRecipient.address });
    }
    expect(await revertName(pub.simulateContract({ account: accounts.settler, address: factory, abi: walletFactoryAbi, functionName: "deployAndSweepBatch", args: [reqs] }))).toBe("FeeExceedsBalance");
    const r = await fx.wait(fx.walletOf(accounts.settler).writeContract({ address: factory, abi: walletFactoryAbi, functionName: "deployAndSweepBatch", args: [reqs], gas: 2_000_000n }), true);
    expect(r.status).toBe("reverted");
    for (const q of reqs) {
      const wallet = fx.walletAddress(q.salt, q.payout);
      expect(await pub.getCode({ address: wallet })).toBeUndefined();
      expect(await fx.balanceOf(tokens.usdc6, wallet)).toBe(100n);
      expect(await fx.balanceOf(tokens.usdc6, q.payout)).toBe(0n);
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

describe("gas", () => {
  it("measures deployAndSweep and a batch of 10", async () => {
    const gas = await measureSweepGas(fx);
    console.log("[gas]", Object.entries(gas).map(([k, v]) => `${k}=${v}`).join(" "));
    expect(gas.deployAndSweepErc20).toBeLessThan(200_000n);
    expect(gas.batchOf10).toBeLessThan(10n * gas.deployAndSweepErc20);
  });
});
