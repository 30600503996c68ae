import type { PublicClient } from "viem";
import type { ActiveChain } from "../chains/runtime.js";
import type { Db } from "../db/client.js";
import type { Config } from "../lib/config.js";

/** What every route and processor is given: no globals, so tests can build several side by side. */
export type AppDeps = {
  db: Db;
  config: Config;
  chains: ActiveChain[];
  clients: Map<number, PublicClient>;
  /** Injectable clock (ms), so time-driven behaviour is testable without waiting. */
  now: () => number;
};

export type Merchant = { id: string; name: string; merchantType: string; platformFeeBps: number; promoUsed: number };

export type AppEnv = { Variables: { deps: AppDeps; merchant: Merchant; apiKey?: string } };
