import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { firstIssue } from "../../core/zod-issues.js";
import type { Caller } from "../merchants/index.js";
import { vaultOfCaller } from "./config-access.js";
import { externalUserIdField } from "./users.js";
import { DEPOSIT_STATUSES, LISTED_DEPOSIT_STATUSES, depositView, type Deposit, type DepositRow } from "./serialize-deposit.js";

/** `limit` of GET /vault/v1/deposits (spec "Limits"). */
export const DEPOSITS_DEFAULT_LIMIT = 50;
export const DEPOSITS_MAX_LIMIT = 100;

/** A deposit with its user's external id, as every reader needs it. */
export const DEPOSIT_SELECT = `SELECT d.*, u.external_user_id FROM vault_deposits d JOIN vault_users u ON u.id = d.vault_user_id`;

/** Retry delay after the n-th failed sweep attempt in a row: 30 s, 1 min, 2 min, … capped at 1 hour. */
export function retryDelayMs(attempts: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 60 * 60_000);
}

type ListQuery = Record<string, string | undefined>;

const LIMIT_MESSAGE = `limit must be an integer between 1 and ${DEPOSITS_MAX_LIMIT}`;
/** GET /vault/v1/deposits `?limit&status&externalUserId` (query strings), checked in that order. */
export const vaultDepositsQuery = z.object({
  limit: z
    .string({ error: LIMIT_MESSAGE })
    .regex(/^\d{1,4}$/, LIMIT_MESSAGE)
    .transform(Number)
    .pipe(z.number().min(1, LIMIT_MESSAGE).max(DEPOSITS_MAX_LIMIT, LIMIT_MESSAGE))
    .optional(),
  // `held` (sanctions screening, an extension) is accepted too; the message names the spec's statuses.
  status: z.enum(LISTED_DEPOSIT_STATUSES, { error: `status must be one of: ${DEPOSIT_STATUSES.join(", ")}` }).optional(),
  externalUserId: externalUserIdField.optional(),
});

/**
 * GET /vault/v1/deposits and GraphQL `vaultDeposits`: the caller's vault's deposits, newest first, filtered by
 * `status` and `externalUserId`; `total` counts every match (not only the page).
 */
export async function listVaultDeposits(
  deps: Pick<AppDeps, "db" | "now">,
  caller: Caller,
  query: ListQuery,
): Promise<{ deposits: Deposit[]; total: number }> {
  const vault = await vaultOfCaller(deps, caller);
  const parsed = vaultDepositsQuery.safeParse(query);
  if (!parsed.success) throw new Invalid(firstIssue(parsed.error.issues, Object.keys(vaultDepositsQuery.shape)).message);
  const { limit = DEPOSITS_DEFAULT_LIMIT, status, externalUserId: user } = parsed.data;
  const where = [`d.vault_id = $1`, `d.status <> 'dropped'`];
  const args: unknown[] = [vault.id];
  if (status) where.push(`d.status = $${args.push(status)}`);
  if (user !== undefined) where.push(`u.external_user_id = $${args.push(user)}`);
  const filter = where.join(" AND ");
  const [page, count] = await Promise.all([
    deps.db.pool.query<DepositRow>(`${DEPOSIT_SELECT} WHERE ${filter} ORDER BY d.created_at DESC, d.id DESC LIMIT ${limit}`, args),
    deps.db.pool.query<{ total: string }>(
      `SELECT count(*) AS total FROM vault_deposits d JOIN vault_users u ON u.id = d.vault_user_id WHERE ${filter}`,
      args,
    ),
  ]);
  return { deposits: page.rows.map(depositView), total: Number(count.rows[0]!.total) };
}

/**
 * POST /vault/v1/deposits/{depositId}/recover: the business asks for a deposit that is held (a token the vault
 * does not accept, or at most 0.001 tokens) to be swept to its wallet (at the vault's fee, like any sweep). The sweeper moves the address's
 * whole balance of that token, so every open deposit of it completes with that sweep. Asking twice is harmless.
 */
export async function requestDepositRecovery(deps: Pick<AppDeps, "db" | "now">, caller: Caller, depositId: string): Promise<Deposit> {
  const vault = await vaultOfCaller(deps, caller);
  if (!isUuid(depositId)) throw new NotFound("Deposit not found");
  const { rows } = await deps.db.pool.query<DepositRow>(
    `UPDATE vault_deposits SET recover_requested_at = COALESCE(recover_requested_at, $3), updated_at = $3
      WHERE id = $1 AND vault_id = $2 AND status = 'detected' AND hold IS NOT NULL RETURNING id`,
    [depositId, vault.id, new Date(deps.now())],
  );
  const row = (await deps.db.pool.query<DepositRow>(`${DEPOSIT_SELECT} WHERE d.id = $1 AND d.vault_id = $2`, [depositId, vault.id]))
    .rows[0];
  if (!row) throw new NotFound("Deposit not found");
  if (rows.length === 0) {
    if (row.status === "completed") throw new Conflict("Deposit already processed");
    if (row.status === "processing") throw new Conflict("Deposit is being processed");
    if (row.status === "held") throw new Conflict("Deposit is held by sanctions screening");
    if (row.status === "returned") throw new Conflict("Deposit funds were returned by sanctions screening");
    throw new Conflict("Only a held deposit (below the minimum, or a token the vault does not accept) can be recovered");
  }
  return depositView(row);
}
