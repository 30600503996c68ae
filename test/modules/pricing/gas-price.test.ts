import { createPublicClient, http } from "viem";
import { expect, inject, it } from "vitest";
import { cachedGasPrice } from "../../../modules/pricing/index.js";

// The quote's gas price: one eth_gasPrice per chain for concurrent quotes, never older than the TTL.
const rpcUrl = inject("stackEnv").RPC_URL_137!;

function countingClient(url: string) {
  const calls: string[] = [];
  const client = createPublicClient({
    transport: http(url, {
      retryCount: 0,
      onFetchRequest: async (req) => void calls.push(((await req.clone().json()) as { method: string }).method),
    }),
  });
  return { client, calls };
}

it("concurrent callers share one eth_gasPrice, reused only within the TTL", async () => {
  // A TTL a loaded, lower-priority test worker cannot outrun between two calls (300 ms once did).
  const TTL = 3_000;
  const { client, calls } = countingClient(rpcUrl);
  const answers = await Promise.all(Array.from({ length: 20 }, () => cachedGasPrice(client, TTL)));
  expect(calls).toEqual(["eth_gasPrice"]);
  expect(new Set(answers).size).toBe(1);
  expect(answers[0]).toBeGreaterThan(0n);

  await cachedGasPrice(client, TTL);
  expect(calls).toHaveLength(1);
  await new Promise((r) => setTimeout(r, TTL + 100));
  await cachedGasPrice(client, TTL);
  expect(calls).toEqual(["eth_gasPrice", "eth_gasPrice"]);
});

it("a failed read is not cached: the next caller asks again", async () => {
  const { client, calls } = countingClient("http://127.0.0.1:9");
  await expect(cachedGasPrice(client)).rejects.toThrow();
  await expect(cachedGasPrice(client)).rejects.toThrow();
  expect(calls).toEqual(["eth_gasPrice", "eth_gasPrice"]);
});
