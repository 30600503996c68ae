import { afterAll, expect, it } from "vitest";

// ponder.config.ts is generated from the registry: chains with an RPC URL, their tokens, the factory.
const saved = { ...process.env };
afterAll(() => {
  process.env = saved;
});

it("indexes exactly the chains that have RPC_URL_<chainId>, Transfers of any token, and the factory", async () => {
  for (const k of Object.keys(process.env)) if (k.startsWith("RPC_URL_") || k === "DEPLOYMENTS_FILE") delete process.env[k];
  process.env.RPC_URL_1 = "http://127.0.0.1:1";
  process.env.RPC_URL_8453 = "http://127.0.0.1:2";
  process.env.FACTORY_ADDRESS_8453 = "0x1000000000000000000000000000000000000001";
  // A module of its own (the query): the stack project's workers keep modules between files, and another file may
  // have imported the config with its own environment.
  const { default: config } = await import(/* @vite-ignore */ `../../ponder.config.js?env=${Date.now()}`);
  expect(Object.values(config.chains).map((c: any) => c.id)).toEqual([1, 8453]);
  // No address: a wildcard Transfer filter on every chain (src/index.ts keeps only our addresses' transfers).
  const token = config.contracts.Token.chain as Record<string, { address?: string[]; startBlock: number }>;
  expect(Object.keys(token)).toEqual(["ethereum", "base"]);
  for (const c of Object.values(token)) expect(c.address).toBeUndefined();
  // A factory only where one is configured.
  expect(Object.keys(config.contracts.WalletFactory.chain)).toEqual(["base"]);
});
