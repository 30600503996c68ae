import fs from "node:fs";
import { isAddress } from "viem";
import { CHAINS } from "../chains/registry.js";
import { activeChains, rpcUrlsOf, type Deployments } from "../chains/runtime.js";
import { DEV_HASH_SECRET } from "../core/config.js";
import { parseSecretKey } from "../core/secret-box.js";

/** What one `npm run serve` process can run; ROLES names a subset (all by default). */
export const ROLES = ["api", "processors", "indexer"] as const;
export type Role = (typeof ROLES)[number];

type Env = Record<string, string | undefined>;

export type ServeCheck = {
  roles: Role[];
  /** Variables that must be set and are not, e.g. `FACTORY_ADDRESS_137 (chain 137)`. */
  missing: string[];
  /** Variables set to something unusable, with the reason (never the value: some are secrets). */
  invalid: string[];
};

const set = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";
const validSecretKey = (v: string) => {
  try {
    return parseSecretKey(v).length === 32;
  } catch {
    return false;
  }
};
const isHttpUrl = (v: string) => {
  try {
    return ["http:", "https:"].includes(new URL(v).protocol);
  } catch {
    return false;
  }
};

/**
 * Checks the environment of a production process before anything starts, so an operator sees
 * every missing or broken setting at once instead of one run-time failure at a time.
 * Pure apart from reading DEPLOYMENTS_FILE when it is set.
 */
export function checkServeConfig(env: Env): ServeCheck {
  const missing: string[] = [];
  const invalid: string[] = [];

  const roles: Role[] = [];
  const names = set(env.ROLES)
    ? env.ROLES.split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : [...ROLES];
  for (const name of names) {
    if (!(ROLES as readonly string[]).includes(name)) invalid.push(`ROLES (unknown role "${name}"; roles are ${ROLES.join(", ")})`);
    else if (!roles.includes(name as Role)) roles.push(name as Role);
  }
  const app = roles.includes("api") || roles.includes("processors");

  if (!set(env.DATABASE_URL)) missing.push("DATABASE_URL");
  // Processors sign redirect hashes into webhooks too, so both need the real secret.
  if (app) {
    if (!set(env.HASH_SECRET)) missing.push("HASH_SECRET");
    else if (env.HASH_SECRET === DEV_HASH_SECRET) invalid.push("HASH_SECRET (the development default)");
  }
  // Both seal and open webhook secrets with it (core/secret-box.ts).
  if (app) {
    if (!set(env.SECRET_KEY)) missing.push("SECRET_KEY");
    else if (!validSecretKey(env.SECRET_KEY)) invalid.push("SECRET_KEY (not 32 bytes as 64 hex characters or base64)");
  }
  if (roles.includes("processors")) {
    // The settler signs with its key, or through a remote signer that holds it (SIGNER_URL, SIGNER_ADDRESS).
    const remote = set(env.SIGNER_URL) || set(env.SIGNER_ADDRESS);
    if (remote) {
      if (!set(env.SIGNER_URL)) missing.push("SIGNER_URL");
      else if (!/^https?:\/\//.test(env.SIGNER_URL!)) invalid.push("SIGNER_URL (not an http(s) URL)");
      if (!set(env.SIGNER_ADDRESS)) missing.push("SIGNER_ADDRESS");
      else if (!isAddress(env.SIGNER_ADDRESS!)) invalid.push("SIGNER_ADDRESS (not an address)");
    } else if (!set(env.SETTLER_PRIVATE_KEY)) missing.push("SETTLER_PRIVATE_KEY");
    else if (!/^0x[0-9a-fA-F]{64}$/.test(env.SETTLER_PRIVATE_KEY)) invalid.push("SETTLER_PRIVATE_KEY (not a 0x-prefixed 32-byte hex key)");
  }
  // Gas Tank deposit wallets pay out to the treasury (FEE_RECIPIENT stands in for it).
  if (app && !set(env.TREASURY_ADDRESS) && !set(env.FEE_RECIPIENT)) missing.push("TREASURY_ADDRESS");

  for (const name of ["APP_SCHEMA", "PONDER_VIEWS_SCHEMA", "PONDER_SCHEMA"])
    if (set(env[name]) && !/^[a-z_][a-z0-9_]*$/.test(env[name]!)) invalid.push(`${name} (not a lowercase SQL identifier)`);
  for (const name of ["PORT", "PONDER_PORT"]) if (set(env[name]) && !/^\d+$/.test(env[name]!)) invalid.push(`${name} (not a port number)`);
  for (const name of ["GAS_TANK_CONFIRMATIONS", "DETECTOR_INTERVAL_MS", "SETTLER_INTERVAL_MS", "PONDER_POLLING_INTERVAL"])
    if (set(env[name]) && !/^\d+$/.test(env[name]!)) invalid.push(`${name} (not a whole number)`);
  if (set(env.API_WORKERS) && !(/^\d+$/.test(env.API_WORKERS) && Number(env.API_WORKERS) >= 1 && Number(env.API_WORKERS) <= 64))
    invalid.push("API_WORKERS (not a whole number from 1 to 64)");

  for (const [name, value] of Object.entries(env)) {
    if (!set(value)) continue;
    if (
      /^(FACTORY_ADDRESS|FACTORY_IMPLEMENTATION|ORACLE_ADDRESS)_\d+$|^TOKEN_ADDRESS_\d+_\w+$|^(FEE_RECIPIENT|TREASURY_ADDRESS)$/.test(name)
    ) {
      if (!isAddress(value, { strict: false })) invalid.push(`${name} (not an address)`);
    } else if (/^START_BLOCK_\d+$/.test(name)) {
      if (!/^\d+$/.test(value)) invalid.push(`${name} (not a block number)`);
    } else if (/^RPC_URL_\d+$/.test(name)) {
      const chainId = Number(name.slice("RPC_URL_".length));
      if (!CHAINS.some((c) => c.chainId === chainId)) invalid.push(`${name} (chain ${chainId} is not in the registry)`);
      else if (rpcUrlsOf(value).length === 0 || !rpcUrlsOf(value).every(isHttpUrl))
        invalid.push(`${name} (not a comma-separated list of http(s) URLs)`);
    } else if (/^RPC_MAX_RPS_\d+$/.test(name)) {
      if (!value.split(",").every((x) => /^\d+$/.test(x.trim()))) invalid.push(`${name} (not whole requests per second, comma-separated)`);
    }
  }

  let deployments: Deployments = { chains: {} };
  if (set(env.DEPLOYMENTS_FILE)) {
    try {
      deployments = JSON.parse(fs.readFileSync(env.DEPLOYMENTS_FILE, "utf8")) as Deployments;
    } catch (e) {
      invalid.push(`DEPLOYMENTS_FILE (${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : "unreadable or not JSON"})`);
    }
  }

  // A chain is served when its RPC URL is set (chains/runtime.ts); each needs its factory.
  const served = CHAINS.filter((c) => set(env[`RPC_URL_${c.chainId}`]));
  if (served.length === 0) missing.push("RPC_URL_<chainId> (no chain to serve)");
  for (const c of served)
    if (!set(env[`FACTORY_ADDRESS_${c.chainId}`]) && !deployments.chains?.[String(c.chainId)]?.factory)
      missing.push(`FACTORY_ADDRESS_${c.chainId} (chain ${c.chainId})`);

  // A mainnet chain's gas fees are priced in its native coin: without a Chainlink feed for it, or the price pusher keeping
  // our PriceOracle fresh from the price index, the price would come from an oracle nothing keeps fresh. Local twins
  // (LOCAL_CHAINS, the local stack) are priced by their deployment.
  const pusher = set(env.PRICE_PUSHER_PRIVATE_KEY) && set(env.PRICE_API_URL);
  const local = new Set((env.LOCAL_CHAINS ?? "").split(",").map((x) => Number(x.trim())));
  if (invalid.length === 0)
    for (const c of served) {
      if (c.testnet || !c.native || local.has(c.chainId)) continue;
      let feeds: Record<string, unknown> | undefined;
      try {
        feeds = activeChains(env).find((a) => a.chainId === c.chainId)?.priceFeeds;
      } catch (e) {
        invalid.push(`${(e as Error).message.split(" ")[0]} (${(e as Error).message})`);
        continue;
      }
      if (!feeds?.[c.native.oracleSymbol] && !pusher)
        missing.push(
          `PRICE_FEED_${c.chainId}_${c.native.oracleSymbol} or PRICE_PUSHER_PRIVATE_KEY with PRICE_API_URL (chain ${c.chainId}: a Chainlink feed for ${c.native.symbol}, or the price pusher)`,
        );
    }

  return { roles, missing, invalid };
}

/** The lines an operator reads when the check fails. */
export function formatServeCheck(check: Pick<ServeCheck, "missing" | "invalid">): string {
  const lines: string[] = [];
  if (check.missing.length) lines.push(`Missing configuration: ${check.missing.join(", ")}`);
  if (check.invalid.length) lines.push(`Invalid configuration: ${check.invalid.join(", ")}`);
  return lines.join("\n");
}
