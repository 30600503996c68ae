import { createPublicClient, getAddress, http } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { priceOracleAbi, priceOracleBytecode } from "../../abis/PriceOracle.js";
import { factoryMismatch, factorySupportsReturn } from "../../chains/factory-check.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { deployFixture, type Fixture } from "./fixture.js";

// The start-up check of `npm run serve` and the local stack: does the chain's factory derive our addresses?
const CHAIN_ID = 777188;
let anvil: Anvil;
let fx: Fixture;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID, blockTime: 0 });
  fx = await deployFixture(anvil.rpcUrl, CHAIN_ID);
}, 30_000);
afterAll(async () => {
  await anvil?.stop();
});

it("this release's factory agrees with chains/deposit-address.ts", async () => {
  expect(await factoryMismatch(fx.pub, fx.factory)).toBeNull();
});

it("an implementation other than the factory's derives other addresses: reported, not accepted", async () => {
  const problem = await factoryMismatch(fx.pub, fx.factory, fx.tokens.usdc6);
  expect(problem).toMatch(/derives 0x[0-9a-fA-F]{40} for a probe where this release derives 0x[0-9a-fA-F]{40}/);
});

it("an address that is no factory throws (an RPC or contract failure is not a verdict)", async () => {
  await expect(factoryMismatch(fx.pub, fx.tokens.usdc6)).rejects.toThrow();
});

it("factorySupportsReturn: this release's factory has returnFunds (a stranger's eth_call gets OwnableUnauthorizedAccount)", async () => {
  expect(await factorySupportsReturn(fx.pub, fx.factory)).toBe(true);
});

it("factorySupportsReturn: a contract without it (empty revert), or no contract at all, is refused, not accepted", async () => {
  // An Ownable contract with neither returnFunds nor a fallback, as a factory of an earlier release: an empty revert.
  const owner = fx.walletOf(fx.accounts.owner);
  const oracle = getAddress((await fx.wait(owner.deployContract({ abi: priceOracleAbi, bytecode: priceOracleBytecode, args: [fx.accounts.owner.address] }))).contractAddress!);
  expect(await factorySupportsReturn(fx.pub, oracle)).toBe(false);
  // The wallet implementation (a receive, no fallback) and an address without code (the call succeeds).
  expect(await factorySupportsReturn(fx.pub, fx.implementation)).toBe(false);
  expect(await factorySupportsReturn(fx.pub, fx.freshAddress())).toBe(false);
});

it("factorySupportsReturn: an RPC failure throws (no verdict)", async () => {
  const dead = createPublicClient({ transport: http("http://127.0.0.1:1", { retryCount: 0, timeout: 2_000 }) });
  await expect(factorySupportsReturn(dead, fx.factory)).rejects.toThrow();
});
