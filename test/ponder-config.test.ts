import { afterAll, expect, it } from "vitest";

// ponder.config.ts is generated from the registry: chains with an RPC URL, their tokens, the factory.
const saved = { ...process.env };
afterAll(() => {
  process.env = saved;
});

it("indexes exactly the chains that have RPC_URL_<chainId>, with their registry tokens and factory", async () => {
  for (const k of Object.keys(process.env)) if (k.startsWith("RPC_URL_") || k === "DEPLOYMENTS_FILE") delete process.env[k];
  process.env.RPC_URL_1 = "http://127.0.0.1:1";
  process.env.RPC_URL_8453 = "http://127.0.0.1:2";
  process.env.FACTORY_ADDRESS_8453 = "0x1000000000000000000000000000000000000001";
  const { default: config } = await import("../ponder.config.js");
  expect(Object.values(config.chains).map((c: any) => c.id)).toEqual([1, 8453]);
  const token = config.contracts.Token.chain as Record<string, { address: string[] }>;
  expect(token.ethereum!.address).toEqual(["0xdAC17F958D2ee523a2206206994597C13D831ec7", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"]);
  expect(token.base!.address).toEqual(["0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"]);
  // A factory only where one is configured.
  expect(Object.keys(config.contracts.WalletFactory.chain)).toEqual(["base"]);
});
