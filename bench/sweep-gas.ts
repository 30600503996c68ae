// Gas of the settlement path on a real Anvil: one deploy-and-sweep against a batch of 10
// (the baseline is ten single deploy-and-sweeps measured in the same run).
//   npx tsx bench/sweep-gas.ts
import { startAnvil } from "../local/anvil.js";
import { deployFixture, measureSweepGas } from "../test/contracts/fixture.js";

const anvil = await startAnvil({ chainId: 777177 });
try {
  const g = await measureSweepGas(await deployFixture(anvil.rpcUrl, 777177));
  const fmt = (x: bigint) => x.toLocaleString("en-US");
  console.log(`deployAndSweep, ERC-20 (6 decimals):     ${fmt(g.deployAndSweepErc20)} gas`);
  console.log(`deployAndSweep, USDT-like (no bool):     ${fmt(g.deployAndSweepUsdt)} gas`);
  console.log(`deployAndSweep, native coin:             ${fmt(g.deployAndSweepNative)} gas`);
  console.log(`sweep of an already deployed wallet:     ${fmt(g.sweepDeployedErc20)} gas`);
  console.log(`deployAndSweepBatch of 10:               ${fmt(g.batchOf10)} gas (${fmt(g.batchOf10 / 10n)} per payment)`);
  console.log(`batch of 10 / 10 single sweeps:          ${(Number(g.batchOf10) / Number(g.deployAndSweepErc20 * 10n)).toFixed(2)}`);
} finally {
  await anvil.stop();
}
