import os from "node:os";
import type { Db } from "../db/client.js";
import { Invalid } from "../core/errors.js";
import type { Target } from "../modules/sanctions/holds.js";
import { LIST_LIMIT_MESSAGE, listHolds } from "../modules/sanctions/list.js";
import { rejectHold } from "../modules/sanctions/reject.js";
import { releaseHold } from "../modules/sanctions/release.js";

// Operator commands on sanctions holds (cli/index.ts; docs/sanctions.md):
//   sanctions list [--all] [--limit <n>]
//   sanctions release --payment <id> | --recovery <id> | --deposit <id> --reason <text> [--operator <name>]
//   sanctions reject  --payment <id> | --recovery <id> | --deposit <id> --reason <text> [--operator <name>]

export const SANCTIONS_USAGE = `  sanctions list [--all] [--limit <1-1000>]   (held payments, recoveries and vault deposits, and screenings that wait; --all: resolved holds too)
  sanctions release --payment <paymentId> | --recovery <recoveryId> | --deposit <depositId> --reason <text> [--operator <name>]   (it settles)
  sanctions reject --payment <paymentId> | --recovery <recoveryId> | --deposit <depositId> --reason <text> [--operator <name>]   (it never settles here; no funds move, nothing is returned)`;

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
