// Settlement through a base-fee spike (chains/tx-sender.ts): three transactions signed at a 10 gwei base fee, then
// every block at 3x for `--spike` blocks, then the base fee falling 12.5% a block (as fast as EIP-1559 lets it) back
// to 10. One reconcile pass per block, as the settler runs. Measured: blocks (and chain time at Base's 2 s blocks)
// from the spike's first block to all three mined, with replacement, against the same run without it (the stored
// bytes sent again, as the sender did before: the baseline).
//   npx tsx bench/fee-spike.ts [--spike 30]
import { parseEther, parseGwei, type Hex, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createPublicClient, http } from "viem";
import { createDeps } from "../app/deps.js";
import { reconcileStored, txSender, type SignedTx } from "../chains/tx-sender.js";
import { migrate } from "../db/migrate.js";
import { benchLog, runBench, startBenchChain } from "./lib/bench-stack.js";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const SPIKE_BLOCKS = arg("spike", 30);
const BLOCK_MS = 2_000; // Base
const CHAIN_ID = 8453;

const chain = await startBenchChain({ name: "fee-spike", chainId: CHAIN_ID, blockTime: 0 });
await runBench(chain, async () => {
  // The baseline's refused broadcasts are logged once a block each: keep stdout for the figures.
  process.env.LOG_LEVEL ??= "error";
  const deps = createDeps({ env: { ...chain.env, APP_SCHEMA: "app" } });
  chain.onStop(() => deps.db.close());
  await migrate(deps.db);
  const active = deps.chains.find((c) => c.chainId === CHAIN_ID)!;
  const client = createPublicClient({ transport: http(chain.rpcUrl) }) as PublicClient;
  const rpc = (method: string, params: unknown[] = []) => client.request({ method: method as never, params: params as never });
  const mine = async (gwei: bigint) => {
    await rpc("anvil_setNextBlockBaseFeePerGas", [`0x${gwei.toString(16)}`]);
    await rpc("evm_mine");
  };
  await rpc("evm_setAutomine", [false]);

  /** Base fee of block i after the spike starts: 3x for SPIKE_BLOCKS, then down 12.5% a block to the start. */
  const base0 = parseGwei("10");
  let falling = base0 * 3n;
  const baseAt = (i: number) => {
    if (i < SPIKE_BLOCKS) return base0 * 3n;
    falling = (falling * 875n) / 1000n;
    return falling > base0 ? falling : base0;
  };

  async function run(replace: boolean): Promise<number> {
    await mine(base0);
    const account = privateKeyToAccount(generatePrivateKey());
    await rpc("anvil_setBalance", [account.address, `0x${parseEther("10").toString(16)}`]);
    const sender = txSender({ db: deps.db, chain: active, client, account });
    const txs: SignedTx[] = [];
    const to = privateKeyToAccount(generatePrivateKey()).address;
    for (let i = 0; i < 3; i++) txs.push((await sender.sendTransaction({ to, value: 1n, gas: 21_000n, record: async () => {} }))!);
    falling = base0 * 3n;
    const done = new Set<Hex>();
    for (let block = 0; block < SPIKE_BLOCKS + 200; block++) {
      await mine(baseAt(block));
      const reconcile = replace
        ? (t: SignedTx[], apply: Parameters<typeof sender.reconcile>[1]) => sender.reconcile(t, apply)
        : (t: SignedTx[], apply: Parameters<typeof sender.reconcile>[1]) =>
            reconcileStored({ db: deps.db, chain: active, client, address: account.address }, t, apply);
      await reconcile(
        txs.filter((t) => !done.has(t.hash)),
        async (t, o) => void (o.status === "mined" && done.add(t.hash)),
      );
      if (done.size === txs.length) return block + 1;
    }
    throw new Error("not all mined within 200 blocks after the spike");
  }

  benchLog(`spike: ${SPIKE_BLOCKS} blocks at 3x (30 gwei), then -12.5% a block to 10 gwei; 3 transactions signed at 10 gwei`);
  const withReplacement = await run(true);
  const without = await run(false);
  const secs = (blocks: number) => `${((blocks * BLOCK_MS) / 1000).toFixed(0)} s`;
  console.log(`spike of ${SPIKE_BLOCKS} blocks at 3x the base fee, 3 pending transactions (Base: 2 s blocks):`);
  console.log(`  with replacement        ${String(withReplacement).padStart(4)} blocks to all mined (${secs(withReplacement)})`);
  console.log(`  baseline: no replacement ${String(without).padStart(3)} blocks to all mined (${secs(without)})`);
  console.log(`  ratio: ${(without / withReplacement).toFixed(1)}x faster`);
});
