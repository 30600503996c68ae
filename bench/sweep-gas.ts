// Gas of the settlement path on its own Anvil, per payment, against the floor measured in the same run: one plain
// ERC-20 transfer transaction. Batches of 1, 10, 50 and 100 payments (each with a fee, to 5 merchants) of a
// 6-decimal ERC-20, the USDT-like token (transfer returns nothing) and the native coin, sent as the settler sends
// them (chains/factory-calls.ts); fresh wallets (deploy and sweep), then the same wallets paid again and re-swept.
//   npx tsx bench/sweep-gas.ts
// Target (issue 12): <= 60k gas per ERC-20 payment in batches of 50, <= 45k per re-sweep of a deployed wallet.
import { startAnvil } from "../local/anvil.js";
import { SWEEP_GAS_PER_PAYMENT_BOUND } from "../modules/settlement/index.js";
import { deployFixture, measureBatchGas, measureTransferFloor, type GasToken } from "../test/contracts/fixture.js";

const SIZES = [1, 10, 50, 100];
const TOKENS: { token: GasToken; label: string }[] = [
  { token: "erc20", label: "ERC-20 (6 decimals)" },
  { token: "usdt", label: "USDT-like (no bool)" },
  { token: "native", label: "native coin" },
];
const CHAIN_ID = 777177;

const anvil = await startAnvil({ chainId: CHAIN_ID });
try {
  const fx = await deployFixture(anvil.rpcUrl, CHAIN_ID);
  const floor = await measureTransferFloor(fx);
  const fmt = (x: bigint) => x.toLocaleString("en-US").padStart(9);
  const ratio = (x: bigint) => `${(Number(x) / Number(floor.toHolder)).toFixed(2)}x`.padStart(6);
  console.log(`floor: plain ERC-20 transfer to a holder ${fmt(floor.toHolder)} gas (to a fresh address ${fmt(floor.toFresh).trim()})`);
  console.log(`per payment, fee on, 5 merchants (fewer when n < 5), ratio to the floor:`);
  console.log(`${"token".padEnd(21)} ${"n".padStart(4)} ${"fresh (deploy+sweep)".padStart(24)} ${"re-sweep (deployed)".padStart(24)}`);
  const results: Record<string, { perFresh: bigint; perResweep: bigint }> = {};
  for (const t of TOKENS)
    for (const n of SIZES) {
      const g = await measureBatchGas(fx, { token: t.token, n });
      results[`${t.token}:${n}`] = g;
      console.log(
        `${t.label.padEnd(21)} ${String(n).padStart(4)} ${fmt(g.perFresh)} ${ratio(g.perFresh)}       ${fmt(g.perResweep)} ${ratio(g.perResweep)}`,
      );
    }
  // What the settler sizes its batches with (modules/settlement/batch-size.ts): every payment of the batch to a
  // different merchant who holds nothing yet (a first balance written, a new account for the native coin).
  console.log(`worst case, 50 payments to 50 merchants holding nothing yet (bound used for batch sizing: ${SWEEP_GAS_PER_PAYMENT_BOUND}):`);
  for (const t of TOKENS) {
    const w = await measureBatchGas(fx, { token: t.token, n: 50, freshMerchants: true });
    console.log(
      `${t.label.padEnd(21)} ${"50".padStart(4)} ${fmt(w.perFresh)} ${ratio(w.perFresh)}       ${fmt(w.perResweep)} ${ratio(w.perResweep)}`,
    );
    if (w.perFresh > SWEEP_GAS_PER_PAYMENT_BOUND) {
      console.log(`  above the bound ${SWEEP_GAS_PER_PAYMENT_BOUND}: raise SWEEP_GAS_PER_PAYMENT_BOUND`);
      process.exitCode = 1;
    }
  }
  const ok50 = results["erc20:50"]!;
  const pass = ok50.perFresh <= 60_000n && ok50.perResweep <= 45_000n;
  console.log(
    `target, ERC-20 in batches of 50: ${ok50.perFresh} <= 60000 per payment, ${ok50.perResweep} <= 45000 per re-sweep: ${pass ? "met" : "NOT met"}`,
  );
  if (!pass) process.exitCode = 1;
} finally {
  await anvil.stop();
}
