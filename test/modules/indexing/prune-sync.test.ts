import { randomBytes, randomInt } from "node:crypto";
import { pad, toEventSelector, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexerProgress } from "../../../db/indexer-status.js";
import { pruneSyncStore, TRANSFER_TOPIC } from "../../../modules/indexing/index.js";
import { syncPruner } from "../../../processors/sync-pruner.js";
import { waitFor } from "../../helpers/chain.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";

// The sync-store pruner on the run's Postgres and Ponder. The local chains use `disableCache` (Ponder keeps no
// realtime logs), so the logs here are synthetic rows shaped like Ponder's (sync-store/encode.js), in blocks Ponder
// never reads: block 0 (below every start block, at or below any finalized block) and block 10^12 (above it).
let deps: TestDeps;
const CHAIN = 137;
const BELOW = 0n;
const ABOVE = 1_000_000_000_000n;
// Indexes far above a real block's, random per run: no clash with Ponder's rows or a previous run's leftovers.
const base = randomInt(1_000_000, 2_000_000_000);
const addr = () => `0x${randomBytes(20).toString("hex")}` as Hex;
const topic = (a: Hex) => pad(a, { size: 32 });
const hash = () => `0x${randomBytes(32).toString("hex")}` as Hex;
const ours = addr();
const OTHER_EVENT = toEventSelector("WalletDeployed(address,address,bytes32)");

type Row = { name: string; block: bigint; tx: number; topics: (Hex | null)[] };
// log index = base + i; transaction index = base + tx
const rows: Row[] = [
  { name: "foreign transfer", block: BELOW, tx: 1, topics: [TRANSFER_TOPIC, topic(addr()), topic(addr())] },
  { name: "transfer to ours", block: BELOW, tx: 2, topics: [TRANSFER_TOPIC, topic(addr()), topic(ours)] },
  // Mixed case on purpose: topics are compared lowercase.
  {
    name: "transfer from ours",
    block: BELOW,
    tx: 3,
    topics: [TRANSFER_TOPIC, topic(ours).toUpperCase().replace("0X", "0x") as Hex, topic(addr())],
  },
  { name: "other event", block: BELOW, tx: 4, topics: [OTHER_EVENT, topic(addr()), topic(addr())] },
  { name: "foreign transfer sharing a transaction", block: BELOW, tx: 4, topics: [TRANSFER_TOPIC, topic(addr()), topic(addr())] },
  { name: "foreign ERC-721 transfer", block: BELOW, tx: 5, topics: [TRANSFER_TOPIC, topic(addr()), topic(addr()), pad("0x07")] },
  { name: "foreign transfer above finality", block: ABOVE, tx: 1, topics: [TRANSFER_TOPIC, topic(addr()), topic(addr())] },
];
// One transaction per (block, index), named after its first log.
const txs = rows.filter((r, i) => rows.findIndex((o) => o.block === r.block && o.tx === r.tx) === i);

async function logsLeft(): Promise<string[]> {
  const { rows: left } = await deps.db.pool.query<{ log_index: number; block_number: string }>(
    `SELECT block_number, log_index FROM ponder_sync.logs WHERE chain_id = $1 AND block_number IN ($2, $3) AND log_index >= $4 AND log_index < $5`,
    [CHAIN, BELOW, ABOVE, base, base + rows.length],
  );
  return rows.filter((r, i) => left.some((l) => l.log_index === base + i && BigInt(l.block_number) === r.block)).map((r) => r.name);
}

async function txsLeft(table: "transactions" | "transaction_receipts"): Promise<string[]> {
  const { rows: left } = await deps.db.pool.query<{ transaction_index: number; block_number: string }>(
    `SELECT block_number, transaction_index FROM ponder_sync.${table}
      WHERE chain_id = $1 AND block_number IN ($2, $3) AND transaction_index > $4 AND transaction_index <= $4 + 10`,
    [CHAIN, BELOW, ABOVE, base],
  );
  return txs.filter((r) => left.some((l) => l.transaction_index === base + r.tx && BigInt(l.block_number) === r.block)).map((r) => r.name);
}

async function cleanupRows() {
  for (const [table, col, lo, hi] of [
    ["logs", "log_index", base, base + rows.length - 1],
    ["transactions", "transaction_index", base + 1, base + 10],
    ["transaction_receipts", "transaction_index", base + 1, base + 10],
  ] as const)
    await deps.db.pool.query(
      `DELETE FROM ponder_sync.${table} WHERE chain_id = $1 AND block_number IN ($2, $3) AND ${col} BETWEEN $4 AND $5`,
      [CHAIN, BELOW, ABOVE, lo, hi],
    );
}

beforeAll(async () => {
  deps = await createTestDeps();
  // Ponder is up (its views, its sync store) and our chain's start block is above block 0.
  await waitFor(async () => (await indexerProgress(deps.db))?.some((c) => c.chainId === CHAIN), {
    timeout: 120_000,
    what: "indexer ready",
  });
  expect(deps.chains.find((c) => c.chainId === CHAIN)!.startBlock).toBeGreaterThan(0);
  // Registered before any row mentions it, as a payment address is before anyone can pay it.
  await deps.db.pool.query(
    `INSERT INTO watched_addresses (chain_id, address, kind, owner_id) VALUES ($1, $2, 'payment', 'sync-prune-test')`,
    [CHAIN, ours],
  );
  const blockHash = hash();
  for (const [i, r] of rows.entries())
    await deps.db.pool.query(
      `INSERT INTO ponder_sync.logs (chain_id, block_number, log_index, transaction_index, block_hash, transaction_hash, address, topic0, topic1, topic2, topic3, data)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        CHAIN,
        r.block,
        base + i,
        base + r.tx,
        blockHash,
        hash(),
        addr(),
        r.topics[0],
        r.topics[1],
        r.topics[2],
        r.topics[3] ?? null,
        pad("0x01"),
      ],
    );
  for (const r of txs) {
    await deps.db.pool.query(
      `INSERT INTO ponder_sync.transactions (chain_id, block_number, transaction_index, hash, block_hash, "from", "to", input, value, nonce, type, gas)
       VALUES ($1, $2, $3, $4, $5, $6, $7, '0x', 0, 0, '0x2', 21000)`,
      [CHAIN, r.block, base + r.tx, hash(), blockHash, addr(), addr()],
    );
    await deps.db.pool.query(
      `INSERT INTO ponder_sync.transaction_receipts (chain_id, block_number, transaction_index, transaction_hash, block_hash, "from", "to",
         logs_bloom, gas_used, cumulative_gas_used, effective_gas_price, status, type)
       VALUES ($1, $2, $3, $4, $5, $6, $7, '0x00', 21000, 21000, 1, '0x1', '0x2')`,
      [CHAIN, r.block, base + r.tx, hash(), blockHash, addr(), addr()],
    );
  }
}, 180_000);

afterAll(async () => {
  if (!deps) return;
  await cleanupRows().catch(() => {});
  await deps.cleanup();
});

describe("sync-store pruner", () => {
  it("relies on what Ponder's config is: log filters only, one checkpoint per chain", async () => {
    const { default: config } = await import("../../../ponder.config.js");
    const c = config as unknown as Record<string, unknown> & { contracts: Record<string, Record<string, unknown>> };
    // A transaction, transfer, block or trace filter would read transactions the pruner deletes once their logs are gone.
    expect(c.accounts).toBeUndefined();
    expect(c.blocks).toBeUndefined();
    for (const contract of Object.values(c.contracts)) {
      expect(contract.includeCallTraces).toBeFalsy();
      expect(contract.includeTransactionReceipts).toBeFalsy();
    }
    // Per-chain finalized checkpoints (omnichain ordering would mix chains in one checkpoint).
    expect(c.ordering).toBe("multichain");
  });

  it("deletes final foreign Transfer logs, then their orphaned transactions; keeps ours, other events and unfinal blocks", async () => {
    const finalized = (await indexerProgress(deps.db))!.find((c) => c.chainId === CHAIN)!.finalizedBlock;
    expect(BigInt(finalized)).toBeGreaterThanOrEqual(BELOW);
    expect(BigInt(finalized)).toBeLessThan(ABOVE);

    // The processor: one pass (another test file's pruner may hold the database's prune lock: try again).
    const p = syncPruner();
    await waitFor(
      async () => {
        await p.run(deps);
        return !(await logsLeft()).includes("foreign transfer");
      },
      { timeout: 60_000, interval: 500, what: "the processor's pass" },
    );
    expect(await logsLeft()).toEqual(["transfer to ours", "transfer from ours", "other event", "foreign transfer above finality"]);

    // The next pass deletes the transactions (and receipts) no log refers to any more.
    const r = await pruneSyncStore(deps.db, { wait: true, txDelayMs: 0 });
    expect("chains" in r && r.chains.find((c) => c.chainId === CHAIN)?.transactions).toBe("done");
    const kept = ["transfer to ours", "transfer from ours", "other event", "foreign transfer above finality"];
    expect(await txsLeft("transactions")).toEqual(kept);
    expect(await txsLeft("transaction_receipts")).toEqual(kept);

    // Repeatable: a full pass again changes nothing of what is left.
    await pruneSyncStore(deps.db, { wait: true, txDelayMs: 0, full: true });
    await pruneSyncStore(deps.db, { wait: true, txDelayMs: 0 });
    expect(await logsLeft()).toEqual(["transfer to ours", "transfer from ours", "other event", "foreign transfer above finality"]);
    expect(await txsLeft("transactions")).toEqual(kept);
  });

  it("does nothing where there is no sync store", async () => {
    expect(await pruneSyncStore(deps.db, { syncSchema: "no_such_sync_store" })).toEqual({ skipped: "no-sync-store" });
  });
});
