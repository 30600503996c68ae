import { createPublicClient, createWalletClient, http, parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { testTokenAbi } from "../../abis/TestToken.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { viemChain } from "../../chains/clients.js";
import type { Db } from "../../db/client.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { recentProcessorLog } from "./diagnostics.js";

/** Real transactions on the run's Anvil chains. */
export function chainHelpers(chain: ActiveChain) {
  const transport = http(chain.rpcUrl);
  const vchain = viemChain(chain);
  const pub = createPublicClient({ chain: vchain, transport });
  const walletOf = (account: PrivateKeyAccount) => createWalletClient({ chain: vchain, transport, account });
  const token = (symbol: string) => {
    const t = chain.tokens.find((x) => x.symbol === symbol);
    if (!t) throw new Error(`no ${symbol} on chain ${chain.chainId}`);
    return t;
  };
  const wait = async (hash: Hex) => {
    const r = await pub.waitForTransactionReceipt({ hash, pollingInterval: 100 });
    if (r.status !== "success") throw new Error(`transaction ${hash} reverted`);
    return r;
  };
  return {
    pub,
    walletOf,
    token,
    wait,
    /**
     * A fresh payer with native coin for gas: parallel test files never share an account (nonces).
     * Test tokens mint to anyone, so payers mint their own tokens.
     */
    async newPayer(): Promise<PrivateKeyAccount> {
      const account = privateKeyToAccount(generatePrivateKey());
      await pub.request({ method: "anvil_setBalance" as any, params: [account.address, `0x${parseEther("1000000").toString(16)}`] as any });
      return account;
    },
    async mint(symbol: string, to: Address, amount: bigint, minter?: PrivateKeyAccount) {
      return wait(
        await walletOf(minter ?? (await this.newPayer())).writeContract({
          address: token(symbol).address,
          abi: testTokenAbi,
          functionName: "mint",
          args: [to, amount],
        }),
      );
    },
    /** Mints to a payer, then the payer transfers to `to` (a real ERC-20 Transfer). */
    async pay(symbol: string, to: Address, amount: bigint, payer?: PrivateKeyAccount) {
      const from = payer ?? (await this.newPayer());
      await this.mint(symbol, from.address, amount, from);
      return wait(
        await walletOf(from).writeContract({
          address: token(symbol).address,
          abi: testTokenAbi,
          functionName: "transfer",
          args: [to, amount],
        }),
      );
    },
    async sendNative(to: Address, value: bigint, payer?: PrivateKeyAccount) {
      return wait(await walletOf(payer ?? (await this.newPayer())).sendTransaction({ to, value }));
    },
    async balanceOf(symbol: string, who: Address): Promise<bigint> {
      return (await pub.readContract({
        address: token(symbol).address,
        abi: testTokenAbi,
        functionName: "balanceOf",
        args: [who],
      })) as bigint;
    },
    async mine(blocks = 1) {
      await pub.request({ method: "anvil_mine" as any, params: [`0x${blocks.toString(16)}`] as any });
    },
  };
}

/**
 * Polls `fn` until it returns a truthy value. On timeout the error names `what`, the `state` it ended in (when
 * given) and the processors' last output.
 */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false>,
  {
    timeout = 30_000,
    interval = 100,
    what = "condition",
    state,
  }: { timeout?: number; interval?: number; what?: string; state?: () => Promise<unknown> } = {},
): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) {
      const last = state
        ? `
state: ${JSON.stringify(await state().catch((e) => `unreadable: ${e}`))}`
        : "";
      throw new Error(`timed out waiting for ${what} after ${timeout} ms${last}${recentProcessorLog()}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** Waits until the indexer has indexed `block` of `chainId` (generous: on a loaded 2-core machine Ponder can lag). */
export async function waitIndexed(db: Db, chainId: number, block: bigint, timeout = 120_000): Promise<void> {
  await waitFor(
    async () => {
      const p = (await indexerProgress(db))?.find((x) => x.chainId === chainId);
      return p && BigInt(p.indexedBlock) >= block;
    },
    { timeout, what: `block ${block} of chain ${chainId} indexed` },
  );
}

/** Runs `step` (a processor pass), then checks `done`, until it holds. */
export async function stepUntil(
  what: string,
  step: () => Promise<unknown>,
  done: () => Promise<boolean>,
  { timeout = 120_000, interval = 300 } = {},
): Promise<void> {
  await waitFor(
    async () => {
      await step();
      return done();
    },
    { timeout, interval, what },
  );
}
