import { z } from "zod";
import { parseSecretKey, SECRET_KEY_FORMAT } from "./secret-box.js";
import { parseTrustedProxies } from "./trusted-proxies.js";
import { LOG_LEVELS } from "./log.js";

// All settings come from the environment; documented in docs/configuration.md.
/** The HASH_SECRET of development and tests; refused in production. */
export const DEV_HASH_SECRET = "dev-only-hash-secret-change-me";

const validKey = (v: string) => {
  try {
    return parseSecretKey(v).length === 32;
  } catch {
    return false;
  }
};

const validProxies = (v: string) => {
  try {
    parseTrustedProxies(v);
    return true;
  } catch {
    return false;
  }
};

const schema = z.object({
  NODE_ENV: z.string().default("development"),
  PORT: z.coerce.number().int().default(3000),
  HOST: z.string().default("127.0.0.1"),
  DATABASE_URL: z.string().optional(),
  /** Connections of each process's database pool (each API worker has its own). */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(10),
  APP_SCHEMA: z.string().default("app"),
  PONDER_VIEWS_SCHEMA: z.string().default("chain"),
  /** Public address of the API, ends in /api. */
  BASE_URL: z.string().optional(),
  /** Where the payer page lives: `{APP_URL}/pay/<paymentId>`. */
  APP_URL: z.string().optional(),
  /** HMAC key of redirect hashes. Required in production. */
  HASH_SECRET: z.string().default(DEV_HASH_SECRET),
  /**
   * Server key that seals webhook secrets (and legacy webhooks' API keys) at rest (core/secret-box.ts).
   * Required in production; `npm start` and the tests provide one. Nothing is derived when it is absent.
   */
  SECRET_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || validKey(v), `SECRET_KEY must be ${SECRET_KEY_FORMAT}`),
  /** Former SECRET_KEYs (comma-separated), accepted for opening only while values are re-sealed under SECRET_KEY. */
  SECRET_KEY_PREVIOUS: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || v.split(",").every((k) => k.trim() === "" || validKey(k)),
      `SECRET_KEY_PREVIOUS must be a comma-separated list of keys, each ${SECRET_KEY_FORMAT}`,
    ),
  /** Private key that may trigger sweeps on the factory (one signer for every chain). */
  SETTLER_PRIVATE_KEY: z.string().optional(),
  /**
   * A remote signer (Web3Signer, Clef: JSON-RPC `eth_signTransaction`) holding the settler's key, instead of
   * SETTLER_PRIVATE_KEY; SIGNER_ADDRESS names the account it signs with (docs/real-chain.md).
   */
  SIGNER_URL: z.url({ protocol: /^https?$/ }).optional(),
  SIGNER_ADDRESS: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, "SIGNER_ADDRESS must be a 0x-prefixed 20-byte address")
    .optional(),
  /** Receives platform fees; must be allow-listed on the factory. */
  FEE_RECIPIENT: z.string().optional(),
  /** The most gas one wallet's sweep may cost (chains/gas-caps.ts); a token whose sweep would cost more is not swept. */
  SWEEP_GAS_CAP_PER_WALLET: z.coerce.bigint().min(100_000n).max(5_000_000n).default(300_000n),
  /** Payout of Gas Tank deposit wallets (the service treasury). */
  TREASURY_ADDRESS: z.string().optional(),
  /** Key that pays agents' withdrawals (docs/agents.md); default SETTLER_PRIVATE_KEY. The operator keeps it funded. */
  AGENT_PAYOUT_PRIVATE_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || /^0x[0-9a-fA-F]{64}$/.test(v), "AGENT_PAYOUT_PRIVATE_KEY must be a 0x-prefixed 32-byte hex key"),
  /** Blocks deep an agent withdrawal's transfer must be before it is paid (or, reverted, refunded); default: the chain's finalityBlocks. */
  AGENT_PAYOUT_CONFIRMATIONS: z.coerce.number().int().positive().optional(),
  /** Highest markup an agent may set, in basis points, for agents the CLI creates without `--cap`. */
  AGENT_MARKUP_CAP_BPS: z.coerce.number().int().min(0).max(10_000).default(100),
  /** Share of a referred merchant's platform fee that accrues to its agent, in basis points (the hosted service pays 30%). */
  AGENT_PLATFORM_SHARE_BPS: z.coerce.number().int().min(0).max(10_000).default(3_000),
  /** Blocks deep a Gas Tank deposit must be before it is credited. */
  GAS_TANK_CONFIRMATIONS: z.coerce.number().int().nonnegative().default(3),
  /** Blocks deep a vault deposit (and its sweep) must be before it is recorded (completed); default: the chain's finalityBlocks. */
  VAULT_CONFIRMATIONS: z.coerce.number().int().positive().optional(),
  /** The detector is woken when a block is indexed; this is its fallback poll (ms), for a lost notification. */
  DETECTOR_INTERVAL_MS: z.coerce.number().int().positive().default(1000),
  /** Pause between settler passes (ms). */
  SETTLER_INTERVAL_MS: z.coerce.number().int().positive().default(250),
  /**
   * GET /api/health is `degraded` for a chain whose oldest unmined transaction, or oldest paid payment not yet
   * settled, waits longer than this (ms), or whose pending transaction sits at the fee cap (docs/observability.md).
   */
  SETTLEMENT_STALL_MS: z.coerce.number().int().positive().default(600_000),
  /**
   * A provider whose head is more than this many blocks behind the highest head among a chain's providers is not read
   * from while another answers (chains/rpc-pool.ts; RPC_URL_<chainId> lists the providers).
   */
  RPC_MAX_LAG_BLOCKS: z.coerce.number().int().nonnegative().default(3),
  /** How long the service waits for one JSON-RPC answer before it asks the chain's next provider (ms). */
  RPC_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * GET /api/health is `degraded` for a chain where a signer's native balance pays for fewer blocks than this at its
   * last hour's spending (modules/settlement/runway.ts); 0 turns that check off. A zero balance while its
   * transactions wait degrades it whatever this is (docs/observability.md).
   */
  SIGNER_RUNWAY_MIN_BLOCKS: z.coerce.number().int().nonnegative().default(1000),
  /** Most payments one settlement transaction sweeps; fewer when a third of the block gas limit holds fewer (docs/operations.md). */
  SETTLEMENT_MAX_BATCH: z.coerce.number().int().positive().default(50),
  /**
   * Proxies believed about the client's address (X-Forwarded-For), for per-address limits and login throttling:
   * `loopback` (a proxy on the same host; the default), `private` (loopback and private networks: Kubernetes,
   * Docker), `none`, or comma-separated CIDRs. Anyone else's X-Forwarded-For is ignored.
   */
  TRUSTED_PROXIES: z
    .string()
    .default("loopback")
    .refine(validProxies, "TRUSTED_PROXIES must be loopback, private, none or comma-separated CIDRs")
    .transform(parseTrustedProxies),
  /** Base URL of the price index provider's HTTP API. */
  PRICE_API_URL: z.string().optional(),
  PRICE_API_KEY: z.string().optional(),
  /**
   * Base URL of the cross-chain bridge's HTTP API (deBridge DLN: `https://dln.debridge.finance`; locally the stand-in).
   * Unset: cross-chain payments are off (modules/bridge/dln.ts).
   */
  BRIDGE_API_URL: z.string().optional(),
  /** DLN access token (sent as `accesstoken`): 300 requests a minute instead of 50. */
  BRIDGE_API_KEY: z.string().optional(),
  /**
   * The service's order authority on the destination chain: the only key that may cancel a payer's unfilled order
   * (it pays the cancel's gas). Required in production when BRIDGE_API_URL is set; elsewhere the settler's key.
   */
  BRIDGE_AUTHORITY_PRIVATE_KEY: z
    .string()
    .optional()
    .transform((v) => v || undefined)
    .refine((v) => v === undefined || /^0x[0-9a-fA-F]{64}$/.test(v), "BRIDGE_AUTHORITY_PRIVATE_KEY must be a 0x-prefixed 32-byte hex key"),
  /** Pause between passes of the bridge-orders processor (ms): order status polls and auto-cancels. */
  /**
   * A Solana JSON-RPC endpoint (an operator's provider; locally the litesvm stand-in): payers on Solana (DLN's source
   * 7565164). Read server-side only: the payer page never sees it. Unset: no Solana payers.
   */
  SOLANA_RPC_URL: z.string().url("SOLANA_RPC_URL must be a URL").optional(),
  /** Which Solana cluster the page asks wallets for (Wallet Standard `solana:<cluster>`): `mainnet`, or the stack's `localnet`. */
  SOLANA_CLUSTER: z.enum(["mainnet", "localnet"]).default("mainnet"),
  BRIDGE_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
  /**
   * Order status requests (and lookups of unreported quotes) the processor makes per minute, spread over its passes
   * (modules/bridge/poll.ts statusBudget). DLN allows 50 a minute without BRIDGE_API_KEY, 300 with one; quotes from
   * payer pages need the rest.
   */
  BRIDGE_STATUS_REQUESTS_PER_MINUTE: z.coerce.number().int().positive().default(30),
  /**
   * Provider requests the payer-facing routes make per minute, per provider endpoint (create-tx for quotes, order-ids
   * for reports), counted in Postgres over every API replica (modules/bridge/budget.ts). Default: 40 without
   * BRIDGE_API_KEY (DLN allows 50 per endpoint), 250 with one (300).
   */
  BRIDGE_PROVIDER_REQUESTS_PER_MINUTE: z.coerce.number().int().positive().optional(),
  /**
   * Most a cancel transaction may carry above deBridge's messaging fee (read on chain from the DeBridgeGate), in USD at
   * the destination chain's native price: the keepers' execution fee (modules/bridge/cancel-fee.ts). Without a price the
   * extra may be at most the fee itself. BRIDGE_CANCEL_MAX_VALUE_WEI_<chainId> adds an absolute ceiling per chain.
   */
  BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD: z
    .string()
    .regex(/^\d+(\.\d{1,18})?$/, "BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD must be a decimal number of USD")
    .default("5"),
  /** Replaced (one wei ceiling cannot fit every chain: DLN's fee is 0.5 MATIC on Polygon); set: the start refuses, naming what replaced it. */
  BRIDGE_CANCEL_MAX_VALUE_WEI: z.string().optional(),
  /**
   * API processes sharing the API port (`npm run serve`, node:cluster; api/workers.ts). Each has its own database pool
   * (DATABASE_POOL_SIZE connections) and caches; limits are shared through Postgres.
   */
  API_WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  /**
   * How long a market price (price index, oracle) is reused by new quotes, per process (ms): concurrent quotes share
   * one lookup, and a price older than this is never used. 0 turns the cache off.
   */
  PRICE_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  /** Seconds past a Chainlink feed's heartbeat its answer is still used (modules/pricing/chainlink.ts). */
  CHAINLINK_HEARTBEAT_MARGIN_S: z.coerce.number().int().nonnegative().default(60),
  /** Seconds an L2 sequencer must have been up again before its chain's feeds are trusted (Chainlink's example: 3600). */
  SEQUENCER_GRACE_S: z.coerce.number().int().nonnegative().default(3600),
  /**
   * Oldest our own PriceOracle's price may be (seconds since its `setPrice`); 0: not checked. Default: with the price
   * pusher, its heartbeat plus 10 minutes; without, 0 (prices set by hand: docs/real-chain.md).
   */
  ORACLE_MAX_AGE_S: z.coerce.number().int().nonnegative().optional(),
  /**
   * Key that owns our PriceOracle contracts: with it, the price pusher (processors/price-pusher.ts) keeps their prices
   * fresh from the price index or a Chainlink feed. Unset: no pusher.
   */
  PRICE_PUSHER_PRIVATE_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || /^0x[0-9a-fA-F]{64}$/.test(v), "PRICE_PUSHER_PRIVATE_KEY must be a 0x-prefixed 32-byte hex key"),
  /** The pusher sets a price that moved more than this (basis points) from the oracle's. */
  PRICE_PUSHER_DEVIATION_BPS: z.coerce.number().int().min(1).max(10_000).default(50),
  /** ...and any price older than this (seconds), moved or not. */
  PRICE_PUSHER_HEARTBEAT_S: z.coerce.number().int().min(10).default(3600),
  /** How often the pusher compares (ms). */
  PRICE_PUSHER_INTERVAL_MS: z.coerce.number().int().min(100).default(30_000),
  /** Symbols the pusher keeps (comma separated); default: every registry symbol it has a source for. */
  PRICE_PUSHER_SYMBOLS: z.string().optional(),
  /**
   * When the price index and the on-chain oracle (a Chainlink feed or our PriceOracle) both price a token and differ by
   * more than this (basis points of the oracle's price), neither is used: the price is unavailable. 0: not compared.
   */
  PRICE_MAX_DEVIATION_BPS: z.coerce.number().int().nonnegative().default(0),
  /**
   * Custom tokens (`<chainId>:<address>`, comma separated) whose contract symbol the on-chain oracle may price.
   * Any other custom token is priced by the index (by address) or customPriceUsd: a worthless token named
   * "ETH" must not borrow ETH's price.
   */
  ORACLE_TRUSTED_TOKENS: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean),
    ),
  /**
   * Sanctions screening (docs/sanctions.md): a file of addresses (one a line, `#` comments) whose payments and vault
   * deposits are held, on every chain; SANCTIONS_LIST_FILE_<chainId> and SANCTIONS_ORACLE_ADDRESS_<chainId> are per
   * chain (chains/runtime.ts). Re-read when it changes.
   */
  SANCTIONS_LIST_FILE: z
    .string()
    .optional()
    .transform((v) => v || undefined),
  /** A source that cannot answer: `closed` (default) leaves the payment or deposit unsettled and asks again; `open` settles, with a warning. */
  SANCTIONS_FAIL_MODE: z.enum(["closed", "open"]).default("closed"),
  /** How long an oracle's answer about an address is reused, per process (ms); 0 asks every time. Failures are never cached. */
  SANCTIONS_CACHE_TTL_MS: z.coerce.number().int().min(0).default(600_000),
  /** Native coin (no log): blocks before the block of the payment's creation time where the search for its senders starts (docs/sanctions.md). */
  SANCTIONS_NATIVE_LOOKBACK_BLOCKS: z.coerce.number().int().min(1).max(100_000).default(120),
  /** Delete final Transfer logs of Ponder's sync store that touch none of our addresses (modules/indexing/prune-sync.ts). */
  SYNC_PRUNE_ENABLED: z
    .string()
    .default("true")
    .transform((v) => v === "1" || v === "true"),
  /** Pause between sync-store prune passes (ms). */
  SYNC_PRUNE_INTERVAL_MS: z.coerce.number().int().positive().default(300_000),
  /**
   * Lease of a claimed webhook delivery (ms): how long a dispatcher that died holds its deliveries before
   * another takes them. Above the 30 s delivery timeout, so a slow delivery is never sent twice at once.
   */
  WEBHOOK_LEASE_MS: z.coerce.number().int().min(40_000).default(180_000),
  /** Days an event stays in the event feed (GET /v1/events) before the event-feed processor deletes it. */
  EVENT_FEED_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** Allow webhook URLs on loopback/private addresses (development and tests only). */
  WEBHOOK_ALLOW_PRIVATE: z
    .string()
    .optional()
    .transform((v) => v === "1" || v === "true"),
  /** Logs (core/log.ts, read there from the environment; checked here at start): level, and pretty lines. */
  LOG_LEVEL: z.enum(LOG_LEVELS).optional(),
  LOG_PRETTY: z.enum(["0", "1", "true", "false"]).optional(),
  /** The level of the API's access line (one a request); `npm start` sets debug. */
  REQUEST_LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  /** Seconds between summary lines of the API's requests at info (count by status class, slowest route); 0: none. `npm start` sets 60. */
  REQUEST_LOG_SUMMARY_S: z.coerce.number().int().min(0).default(0),
  /** Bearer token GET /metrics requires; unset: answered only to a direct connection from this host. */
  METRICS_TOKEN: z.string().min(16, "METRICS_TOKEN must be at least 16 characters").optional(),
  /** A listener serving GET /metrics alone (a processors-only process), on METRICS_HOST. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().default("127.0.0.1"),
  /** `open`: anyone may create a merchant account at /dashboard/signup; `closed`: only the operator (CLI). Default: closed in production. */
  DASHBOARD_SIGNUP: z.enum(["open", "closed"]).optional(),
});

export type Config = Omit<z.infer<typeof schema>, "DASHBOARD_SIGNUP"> & {
  baseUrl: string;
  appUrl: string;
  DASHBOARD_SIGNUP: "open" | "closed";
};

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const c = schema.parse(env);
  const baseUrl = c.BASE_URL ?? `http://${c.HOST}:${c.PORT}/api`;
  const appUrl = c.APP_URL ?? baseUrl.replace(/\/api$/, "");
  if (c.NODE_ENV === "production" && c.HASH_SECRET === DEV_HASH_SECRET) throw new Error("HASH_SECRET must be set in production");
  if (c.NODE_ENV === "production" && !c.SECRET_KEY)
    throw new Error(`SECRET_KEY must be set in production: it encrypts webhook secrets at rest. It is ${SECRET_KEY_FORMAT}`);
  if (c.NODE_ENV === "production" && c.BRIDGE_API_URL && !c.BRIDGE_AUTHORITY_PRIVATE_KEY)
    throw new Error(
      "BRIDGE_AUTHORITY_PRIVATE_KEY must be set in production when BRIDGE_API_URL is: it cancels unfilled cross-chain orders",
    );
  if (c.BRIDGE_CANCEL_MAX_VALUE_WEI !== undefined)
    throw new Error(
      "BRIDGE_CANCEL_MAX_VALUE_WEI was replaced: a cancel now carries deBridge's messaging fee read on chain plus at most " +
        "BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD (default 5); BRIDGE_CANCEL_MAX_VALUE_WEI_<chainId> sets a ceiling per chain",
    );
  const signup = c.DASHBOARD_SIGNUP ?? (c.NODE_ENV === "production" ? "closed" : "open");
  return { ...c, baseUrl, appUrl, DASHBOARD_SIGNUP: signup };
}
