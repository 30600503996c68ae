import os from "node:os";
import { privateKeyToAccount, type LocalAccount } from "viem/accounts";
import { publicClients } from "../chains/clients.js";
import type { ActiveChain } from "../chains/runtime.js";
import type { Config } from "../core/config.js";
import type { Db } from "../db/client.js";
import { Invalid } from "../core/errors.js";
import type { Target } from "../modules/sanctions/index.js";
import { returnHeldFunds } from "../modules/sanctions/index.js";
import { LIST_LIMIT_MESSAGE, listHolds } from "../modules/sanctions/index.js";
import { rejectHold } from "../modules/sanctions/index.js";
import { releaseHold } from "../modules/sanctions/index.js";

// Operator commands on sanctions holds (cli/index.ts; docs/sanctions.md):
//   sanctions list [--all] [--limit <n>]
//   sanctions release --payment <id> | --recovery <id> | --deposit <id> --reason <text> [--operator <name>]
//   sanctions reject  --payment <id> | --recovery <id> | --deposit <id> --reason <text> [--operator <name>]
//   sanctions return  --payment <id> | --recovery <id> | --deposit <id> --to <address> --reason <text> [--amount <units>]
//                     [--licence <ref>] [--operator <name>] [--yes]

export const SANCTIONS_USAGE = `  sanctions list [--all] [--limit <1-1000>]   (held payments, recoveries and vault deposits, and screenings that wait; --all: resolved holds too)
  sanctions release --payment <paymentId> | --recovery <recoveryId> | --deposit <depositId> --reason <text> [--operator <name>]   (it settles)
  sanctions reject --payment <paymentId> | --recovery <recoveryId> | --deposit <depositId> --reason <text> [--operator <name>]   (it never settles here; no funds move)
  sanctions return --payment <paymentId> | --recovery <recoveryId> | --deposit <depositId> --to <address> --reason <text> [--amount <units>] [--licence <ref>] [--operator <name>] [--yes]
      (sends held or rejected funds to --to with the factory owner's key, FACTORY_OWNER_PRIVATE_KEY; without --yes a dry run)`;

/** Who decided: `--operator`, else the OS user on this host (recorded in sanctions_actions). */
export function operatorName(given?: string): string {
  if (given?.trim()) return given.trim();
  let user = process.env.USER ?? "unknown";
  try {
    user = os.userInfo().username;
  } catch {}
  return `${user}@${os.hostname()}`;
}

/** `--limit`: an integer from 1 to 1000 (default 100); anything else is refused before any query. */
export function parseListLimit(limit?: string): number | undefined {
  if (limit === undefined) return undefined;
  if (!/^\d{1,4}$/.test(limit.trim())) throw new Invalid(LIST_LIMIT_MESSAGE);
  return Number(limit.trim());
}

export async function cliSanctionsList(db: Db, opts: { all?: boolean; limit?: string } = {}) {
  return listHolds({ db }, { all: opts.all, limit: parseListLimit(opts.limit) });
}

export async function cliSanctionsRelease(db: Db, target: Target, opts: { reason?: string; operator?: string }, now = Date.now) {
  return releaseHold({ db, now }, target, { actor: operatorName(opts.operator), reason: opts.reason ?? "" });
}

export async function cliSanctionsReject(db: Db, target: Target, opts: { reason?: string; operator?: string }, now = Date.now) {
  return rejectHold({ db, now }, target, { actor: operatorName(opts.operator), reason: opts.reason ?? "" });
}

/**
 * The factory owner's key for `sanctions return`: FACTORY_OWNER_PRIVATE_KEY, read here only (no service process holds
 * it), else on the local stack its deployer (`localOwner`). The key is checked against the factory's `owner()`.
 */
export function factoryOwner(env: Record<string, string | undefined>, localOwner?: LocalAccount): LocalAccount {
  const key = env.FACTORY_OWNER_PRIVATE_KEY?.trim();
  if (key) {
    if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new Invalid("FACTORY_OWNER_PRIVATE_KEY must be 0x followed by 64 hex digits");
    return privateKeyToAccount(key as `0x${string}`);
  }
  if (localOwner) return localOwner;
  throw new Invalid("FACTORY_OWNER_PRIVATE_KEY is not set: returning funds needs the factory owner's key");
}

export type CliReturnOptions = {
  to?: string;
  amount?: string;
  licence?: string;
  reason?: string;
  operator?: string;
  yes?: boolean;
  waitMs?: number;
};

export async function cliSanctionsReturn(
  db: Db,
  chains: ActiveChain[],
  owner: LocalAccount,
  target: Target,
  opts: CliReturnOptions,
  config: Config,
  now = Date.now,
) {
  const deps = { db, chains, clients: publicClients(chains), config, now };
  return returnHeldFunds(
    deps,
    owner,
    target,
    { to: opts.to ?? "", amount: opts.amount, licence: opts.licence, confirm: opts.yes === true, waitMs: opts.waitMs },
    { actor: operatorName(opts.operator), reason: opts.reason ?? "" },
  );
}
