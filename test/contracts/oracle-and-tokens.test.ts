import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BaseError, ContractFunctionRevertedError, encodeFunctionData, parseUnits } from "viem";
import { priceOracleAbi } from "../../abis/PriceOracle.js";
import { testTokenAbi } from "../../abis/TestToken.js";
import { tetherTokenAbi } from "../../abis/TetherToken.js";
import { erc20Abi } from "../../abis/erc20.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { deployFixture, type Fixture } from "./fixture.js";

const CHAIN_ID = 31338;
let anvil: Anvil;
let fx: Fixture;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID, blockTime: 0 });
  fx = await deployFixture(anvil.rpcUrl, CHAIN_ID);
}, 30_000);
afterAll(async () => {
  await anvil?.stop();
});

async function revertName(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    const err = e instanceof BaseError ? e.walk((x) => x instanceof ContractFunctionRevertedError) : null;
    if (err instanceof ContractFunctionRevertedError) return err.data?.errorName;
    throw e;
  }
  throw new Error("expected a revert");
}

describe("PriceOracle", () => {
  it("sets and gets prices by symbol, owner only", async () => {
    const { pub, walletOf, accounts, oracle } = fx;
    const get = (symbol: string) => pub.readContract({ address: oracle, abi: priceOracleAbi, functionName: "getPrice", args: [symbol] });
    expect(await get("ETH")).toEqual([0n, 0n]);

    const owner = walletOf(accounts.owner);
    const r = await fx.wait(owner.writeContract({ address: oracle, abi: priceOracleAbi, functionName: "setPrice", args: ["ETH", parseUnits("3000", 18)] }));
    const block = await pub.getBlock({ blockNumber: r.blockNumber });
    expect(await get("ETH")).toEqual([parseUnits("3000", 18), block.timestamp]);
    expect((await get("eth"))[0]).toBe(parseUnits("3000", 18)); // symbols are case-insensitive

    await fx.wait(owner.writeContract({ address: oracle, abi: priceOracleAbi, functionName: "setPrices", args: [["BNB", "usdt"], [parseUnits("600", 18), parseUnits("1", 18)]] }));
    expect((await get("BNB"))[0]).toBe(parseUnits("600", 18));
    expect((await get("USDT"))[0]).toBe(parseUnits("1", 18));
    const events = await pub.getContractEvents({ address: oracle, abi: priceOracleAbi, eventName: "PriceUpdated", fromBlock: 0n });
    expect(events.map((e) => [e.args.symbol, e.args.price])).toEqual([["ETH", parseUnits("3000", 18)], ["BNB", parseUnits("600", 18)], ["USDT", parseUnits("1", 18)]]);

    expect(await revertName(pub.simulateContract({ account: accounts.stranger, address: oracle, abi: priceOracleAbi, functionName: "setPrice", args: ["ETH", 1n] }))).toBe("OwnableUnauthorizedAccount");
    expect(await revertName(pub.simulateContract({ account: accounts.stranger, address: oracle, abi: priceOracleAbi, functionName: "setPrices", args: [["ETH"], [1n]] }))).toBe("OwnableUnauthorizedAccount");
    expect(await revertName(pub.simulateContract({ account: accounts.owner, address: oracle, abi: priceOracleAbi, functionName: "setPrices", args: [["ETH"], [1n, 2n]] }))).toBe("LengthMismatch");
  });
});

describe("test tokens", () => {
  it("read as ERC-20s with their decimals", async () => {
    const { pub, tokens } = fx;
    for (const [address, symbol, decimals] of [[tokens.usdc6, "USDC", 6], [tokens.dai18, "DAI", 18], [tokens.usdt, "USDT", 6]] as const) {
      expect(await pub.readContract({ address, abi: erc20Abi, functionName: "symbol" })).toBe(symbol);
      expect(await pub.readContract({ address, abi: erc20Abi, functionName: "decimals" })).toBe(decimals);
    }
    expect(await pub.readContract({ address: tokens.usdt, abi: erc20Abi, functionName: "name" })).toBe("Tether USD");
  });

  it("TetherToken's transfer returns no data, TestToken's returns true", async () => {
    const { pub, accounts, tokens, walletOf } = fx;
    await fx.wait(walletOf(accounts.payer).writeContract({ address: tokens.usdt, abi: tetherTokenAbi, functionName: "mint", args: [accounts.payer.address, 100n] }));
    await fx.wait(walletOf(accounts.payer).writeContract({ address: tokens.usdc6, abi: testTokenAbi, functionName: "mint", args: [accounts.payer.address, 100n] }));
    const data = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [accounts.stranger.address, 1n] });
    expect((await pub.call({ account: accounts.payer.address, to: tokens.usdt, data })).data).toBeUndefined();
    expect((await pub.call({ account: accounts.payer.address, to: tokens.usdc6, data })).data).toBe(`0x${"0".repeat(63)}1`);
    // A transfer above the balance reverts, like USDT.
    expect(await revertName(pub.simulateContract({ account: accounts.payer, address: tokens.usdt, abi: tetherTokenAbi, functionName: "transfer", args: [accounts.stranger.address, 101n] }))).toBe("InsufficientBalance");
    const r = await fx.wait(walletOf(accounts.payer).writeContract({ address: tokens.usdt, abi: tetherTokenAbi, functionName: "approve", args: [accounts.stranger.address, 50n] }));
    expect(r.status).toBe("success");
    await fx.wait(walletOf(accounts.stranger).writeContract({ address: tokens.usdt, abi: tetherTokenAbi, functionName: "transferFrom", args: [accounts.payer.address, accounts.stranger.address, 30n] }));
    expect(await pub.readContract({ address: tokens.usdt, abi: tetherTokenAbi, functionName: "allowance", args: [accounts.payer.address, accounts.stranger.address] })).toBe(20n);
    expect(await pub.readContract({ address: tokens.usdt, abi: tetherTokenAbi, functionName: "balanceOf", args: [accounts.stranger.address] })).toBe(30n);
    expect(await pub.readContract({ address: tokens.usdt, abi: tetherTokenAbi, functionName: "totalSupply" })).toBe(100n);
  });
});
