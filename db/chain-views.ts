import { bigint, customType, integer, pgSchema, text, varchar } from "drizzle-orm/pg-core";
import type { InferSelectViewModel } from "drizzle-orm";
import type { Hex } from "viem";
import type * as onchain from "../ponder.schema.js";

// The views Ponder publishes (`--views-schema`, PONDER_VIEWS_SCHEMA) as drizzle views, so processors
// query chain facts with the query builder next to the app's tables (app.schema.ts), as Ponder's
// `with-offchain` example merges its onchain schema into an app's drizzle client. The schema name
// is chosen at runtime, so the views are built per name. `.existing()`: Ponder creates them, never
// a migration. Column names are Ponder's: snake_case of the ponder.schema.ts property names.

/** Ponder's `t.bigint()`: numeric(78), read as an exact bigint (uint256 amounts never pass through a JS number). */
const uint256 = customType<{ data: bigint; driverData: string }>({
  dataType: () => "numeric(78)",
  fromDriver: (v) => BigInt(v),
  toDriver: (v) => v.toString(),
});
/** Ponder's `t.hex()`: lowercase hex in a text column. */
const hex = (name: string) => text(name).$type<Hex>();

export function chainViews(schemaName: string) {
  const s = pgSchema(schemaName);
  const transfer = s
    .view("transfer", {
      id: text("id").notNull(),
      chainId: integer("chain_id").notNull(),
      token: hex("token").notNull(),
      from: hex("from").notNull(),
      to: hex("to").notNull(),
      amount: uint256("amount").notNull(),
      blockNumber: uint256("block_number").notNull(),
      blockHash: hex("block_hash").notNull(),
      transactionHash: hex("transaction_hash").notNull(),
      logIndex: integer("log_index").notNull(),
      timestamp: uint256("timestamp").notNull(),
    })
    .existing();
  const walletDeployment = s
    .view("wallet_deployment", {
      id: text("id").notNull(),
      chainId: integer("chain_id").notNull(),
      wallet: hex("wallet").notNull(),
      payout: hex("payout").notNull(),
      salt: hex("salt").notNull(),
      blockNumber: uint256("block_number").notNull(),
      transactionHash: hex("transaction_hash").notNull(),
      timestamp: uint256("timestamp").notNull(),
    })
    .existing();
  const sweep = s
    .view("sweep", {
      id: text("id").notNull(),
      chainId: integer("chain_id").notNull(),
      wallet: hex("wallet").notNull(),
      token: hex("token").notNull(),
      payout: hex("payout").notNull(),
      amount: uint256("amount").notNull(),
      fee: uint256("fee").notNull(),
      feeRecipient: hex("fee_recipient").notNull(),
      blockNumber: uint256("block_number").notNull(),
      transactionHash: hex("transaction_hash").notNull(),
      logIndex: integer("log_index").notNull(),
      timestamp: uint256("timestamp").notNull(),
    })
    .existing();
  /** Ponder's own progress per chain (fixed-width checkpoint strings, see db/indexer-status.ts). */
  const checkpoint = s
    .view("_ponder_checkpoint", {
      chainName: text("chain_name").notNull(),
      chainId: bigint("chain_id", { mode: "number" }).notNull(),
      safeCheckpoint: varchar("safe_checkpoint", { length: 75 }).notNull(),
      latestCheckpoint: varchar("latest_checkpoint", { length: 75 }).notNull(),
      finalizedCheckpoint: varchar("finalized_checkpoint", { length: 75 }).notNull(),
    })
    .existing();
  return { transfer, walletDeployment, sweep, checkpoint };
}

export type ChainViews = ReturnType<typeof chainViews>;

// Compile-time guard: a column renamed, added or retyped in ponder.schema.ts fails `tsc` here
// instead of a processor's query at run time. (Type-only import: Ponder is not loaded at run time.)
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Mirrors<V extends keyof ChainViews, T extends { $inferSelect: unknown }> = Same<
  InferSelectViewModel<ChainViews[V]>,
  T["$inferSelect"]
>;
type Assert<T extends true> = T;
export type ViewsMirrorPonder = [
  Assert<Mirrors<"transfer", typeof onchain.transfer>>,
  Assert<Mirrors<"walletDeployment", typeof onchain.walletDeployment>>,
  Assert<Mirrors<"sweep", typeof onchain.sweep>>,
];
