import fs from "node:fs";
import path from "node:path";
import { startPonder, type PonderProcess } from "../../local/ponder.js";

// "Ponder alone": what an indexer without our address filter does. The same wildcard ERC-20 Transfer filter
// as ponder.config.ts, every decoded Transfer stored in the same `transfer` table (the root schema's table,
// imported, so columns and indexes are identical), nothing else. The project is written at run time into the
// benchmark's data dir (outside the type-checked tree: Ponder writes a ponder-env.d.ts of its own there), with
// the checkout's node_modules linked in.

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");

const files = (rootSchema: string): Record<string, string> => ({
  "ponder.config.ts": `import { createConfig } from "ponder";
import { erc20Abi } from "viem";
export default createConfig({
  ordering: "multichain",
  database: { kind: "postgres", connectionString: process.env.DATABASE_URL! },
  chains: {
    bench: {
      id: Number(process.env.BENCH_CHAIN_ID),
      rpc: process.env.BENCH_RPC_URL!,
      pollingInterval: Number(process.env.BENCH_POLLING_INTERVAL),
      disableCache: process.env.BENCH_DISABLE_CACHE === "true",
    },
  },
  contracts: { Token: { abi: erc20Abi, chain: { bench: { startBlock: Number(process.env.BENCH_START_BLOCK) } } } },
});
`,
  "ponder.schema.ts": `export { transfer } from ${JSON.stringify(rootSchema)};\n`,
  "src/index.ts": `import { ponder } from "ponder:registry";
import { transfer } from "ponder:schema";
ponder.on("Token:Transfer", async ({ event, context }) => {
  await context.db
    .insert(transfer)
    .values({
      id: \`\${context.chain.id}:\${event.transaction.hash}:\${event.log.logIndex}\`,
      chainId: context.chain.id,
      token: event.log.address.toLowerCase() as \`0x\${string}\`,
      from: event.args.from.toLowerCase() as \`0x\${string}\`,
      to: event.args.to.toLowerCase() as \`0x\${string}\`,
      amount: event.args.value,
      blockNumber: event.block.number,
      blockHash: event.block.hash,
      transactionHash: event.transaction.hash,
      logIndex: event.log.logIndex,
      timestamp: event.block.timestamp,
    })
    .onConflictDoNothing();
});
`,
  "src/api/index.ts": `import { Hono } from "hono";\nexport default new Hono();\n`,
});

export async function startBaselinePonder(opts: {
  dir: string;
  databaseUrl: string;
  chainId: number;
  rpcUrl: string;
  startBlock: number;
  pollingMs: number;
  cache: boolean;
  schema: string;
  viewsSchema: string;
  logFile: string;
}): Promise<PonderProcess> {
  fs.rmSync(opts.dir, { recursive: true, force: true });
  for (const [name, text] of Object.entries(files(path.join(ROOT, "ponder.schema.ts")))) {
    fs.mkdirSync(path.dirname(path.join(opts.dir, name)), { recursive: true });
    fs.writeFileSync(path.join(opts.dir, name), text);
  }
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(opts.dir, "node_modules"), "dir");
  return startPonder({
    root: opts.dir,
    inheritEnv: false,
    env: {
      DATABASE_URL: opts.databaseUrl,
      BENCH_CHAIN_ID: String(opts.chainId),
      BENCH_RPC_URL: opts.rpcUrl,
      BENCH_START_BLOCK: String(opts.startBlock),
      BENCH_POLLING_INTERVAL: String(opts.pollingMs),
      BENCH_DISABLE_CACHE: String(!opts.cache),
      ...(process.env.BENCH_PONDER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_PONDER_NODE_OPTIONS } : {}),
    },
    schema: opts.schema,
    viewsSchema: opts.viewsSchema,
    logFile: opts.logFile,
  });
}
