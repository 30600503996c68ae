import { describe, expect, it } from "vitest";
import type { ActiveChain } from "../chains/runtime.js";
import { eachChain } from "./each-chain.js";

// The slow chain first: were chains run one after the other, the others would finish after it.
const chains = [8453, 137, 777177].map((chainId) => ({ chainId }) as ActiveChain);

describe("eachChain", () => {
  it("one chain's failure or slowness neither stops nor delays another's work; the pass then fails naming it", async () => {
    const done: number[] = [];
    const pass = eachChain({ chains }, "test", async (chain) => {
      if (chain.chainId === 137) throw new Error("max fee per gas less than block base fee\nmore");
      if (chain.chainId === 8453) await new Promise((r) => setTimeout(r, 300)); // an RPC that hangs
      done.push(chain.chainId);
    });
    await expect(pass).rejects.toThrow(/^chain 137: max fee per gas less than block base fee$/);
    // 777177 did not wait for 8453's slow call, nor stop at 137's error.
    expect(done).toEqual([777177, 8453]);
  });

  it("succeeds when every chain does", async () => {
    await expect(eachChain({ chains }, "test", async () => {})).resolves.toBeUndefined();
  });
});
