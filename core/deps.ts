import type { PublicClient } from "viem";
import type { RpcPool } from "../chains/rpc-pool.js";
import type { ActiveChain } from "../chains/runtime.js";
import type { Db } from "../db/client.js";
import type { Config } from "./config.js";

/** What every route and processor is given: no globals, so tests can build several side by side. */
export type AppDeps = {
  db: Db;
  config: Config;
  chains: ActiveChain[];
  clients: Map<number, PublicClient>;
  /** Each chain's RPC providers behind its client (health and metrics read their state); absent in some tests. */
  rpcPools?: Map<number, RpcPool>;
  /** Injectable clock (ms), so time-driven behaviour is testable without waiting. */
  now: () => number;
};

/** The agent that referred a merchant, with its current terms (docs/agents.md). */
export type MerchantAgent = { id: string; markupBps: number; platformShareBps: number };

export type Merchant = {
  id: string;
  name: string;
  merchantType: string;
  platformFeeBps: number;
  promoUsed: number;
  /** Its referring agent (null: none); undefined when the lookup did not read it (quote.ts reads it then). */
  agent?: MerchantAgent | null;
};
