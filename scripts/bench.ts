import { spawn } from "node:child_process";
import path from "node:path";

// `npm run bench [-- <name>...]`: runs the benchmarks of bench/ one after another (each has the machine to
// itself), with their default arguments, and prints each one's figures and baseline as it goes. Names are the
// file names without `.ts`; no name runs them all. Each also runs alone: `npx tsx bench/<name>.ts [args]`.

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
/** Cheapest first, so a short run still gets the quick figures. */
const ALL = ["sweep-gas", "fee-spike", "creation", "webhook-throughput", "payment-latency", "backfill", "mainnet-volume"];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((n) => !ALL.includes(n));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; known: ${ALL.join(", ")}`);
  process.exit(2);
}

const failed: string[] = [];
for (const name of wanted.length ? wanted : ALL) {
  console.log(`\n=== bench/${name}.ts ===`);
  const t0 = Date.now();
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "bench", `${name}.ts`)], { cwd: ROOT, stdio: "inherit" });
    child.once("exit", (c) => resolve(c));
  });
  console.log(`=== ${name}: ${code === 0 ? "done" : `failed (exit ${code})`} in ${((Date.now() - t0) / 1000).toFixed(0)} s ===`);
  if (code !== 0) failed.push(name);
}
if (failed.length) {
  console.error(`\nfailed: ${failed.join(", ")}`);
  process.exit(1);
}
