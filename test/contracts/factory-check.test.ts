import { afterAll, beforeAll, expect, it } from "vitest";
import { factoryMismatch } from "../../chains/factory-check.js";
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
