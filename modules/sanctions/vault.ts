import type pg from "pg";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { logger } from "../../core/log.js";
import { withTransaction } from "../../db/client.js";
import { transitionDeposit, type VaultGroup } from "../vault/index.js";
import { resolveHold, type HoldRow } from "./holds.js";
import { combine, screenAddresses, type Screening } from "./screen.js";
import { depositSenders } from "./senders.js";
import { sourcesFor } from "./sources.js";

// Vault deposits (docs/sanctions.md, "Vault deposits"): a sweep moves the whole balance of an (address, token), so a
// group is swept only when the sender of every open deposit of it is clear. A flagged deposit becomes `held` (an
// extension status beside the spec's four): its group is not swept, its clean deposits included, until the operator
// releases it (`sanctions release --deposit`). A rejected one (`sanctions reject --deposit`) stays `held`: its group is
// never swept again (modules/sanctions/reject.ts; `sanctions list` shows it as frozen).

/**
 * The groups of `groups` that may be swept now. Screens the senders of each group's open deposits (`detected`,
 * `failed`; not those the operator released) and of transfers to it indexed but not yet recorded as deposits (below
 * VAULT_CONFIRMATIONS: the sweep would move them too). A flagged deposit is held (holdDeposit) and its group waits; a
 * flagged transfer not yet recorded makes its group wait until it is (then it is held). An unavailable source: the
 * group waits (fail closed) or is swept with a warning (SANCTIONS_FAIL_MODE=open).
 */
export async function admitVaultGroups(deps: AppDeps, chain: ActiveChain, groups: VaultGroup[]): Promise<VaultGroup[]> {
  if (!groups.length || !sourcesFor(deps, chain).length) return groups;
  const key = (address: string, token: string) => `${address.toLowerCase()}:${token.toLowerCase()}`;
  const args = [chain.chainId, groups.map((g) => g.address.toLowerCase()), groups.map((g) => g.token.toLowerCase())];
  const { rows: deposits } = await deps.db.pool.query<{ id: string; address: string; token_address: string; status: string }>(
    `SELECT d.id, d.address, d.token_address, d.status FROM vault_deposits d
      WHERE d.chain_id = $1 AND (d.address, d.token_address) IN (SELECT * FROM unnest($2::text[], $3::text[]))
        AND d.status IN ('detected', 'failed')
        AND NOT EXISTS (SELECT 1 FROM sanctions_holds h WHERE h.deposit_id = d.id AND h.status = 'released')`,
    args,
  );
  const { rows: pending } = await deps.db.pool.query<{ address: string; token: string; sender: string }>(
    `SELECT DISTINCT t."to" AS address, t.token, t."from" AS sender FROM "${deps.db.viewsSchema}".transfer t
      WHERE t.chain_id = $1 AND (t."to", t.token) IN (SELECT * FROM unnest($2::text[], $3::text[])) AND t.amount > 0
        AND NOT EXISTS (SELECT 1 FROM vault_deposits d WHERE d.transfer_id = t.id)`,
    args,
  );
  const senders = await depositSenders(
    deps,
    deposits.map((d) => d.id),
  );
  const byAddress = await screenAddresses(deps, chain, [...senders.values(), ...pending.map((p) => p.sender)]);

  const admitted: VaultGroup[] = [];
  for (const g of groups) {
    const k = key(g.address, g.token);
    const own = deposits.filter((d) => key(d.address, d.token_address) === k);
    let flagged = 0;
    for (const d of own) {
      const sender = senders.get(d.id);
      const r = sender ? byAddress.get(sender)! : undefined;
      if (r?.status === "sanctioned" && (await holdDeposit(deps, d.id, d.status as "detected" | "failed", r))) flagged++;
    }
    const results: Screening[] = [
      ...own.flatMap((d) => (senders.has(d.id) ? [combine([senders.get(d.id)!], byAddress)] : [])),
      ...pending.filter((p) => key(p.address, p.token) === k).map((p) => combine([p.sender], byAddress)),
    ];
    const sanctioned = results.find((r) => r.status === "sanctioned");
    const unavailable = results.find((r) => r.status === "unavailable");
    if (flagged || sanctioned) {
      if (!flagged)
        logger("sanctions").warn(
          { chainId: chain.chainId, address: g.address, token: g.token },
          "vault group waits: a transfer from a flagged sender is not recorded yet",
        );
      continue;
    }
    if (unavailable) {
      const reason = (unavailable as { reason: string }).reason;
      if (deps.config.SANCTIONS_FAIL_MODE === "open") {
        logger("sanctions").warn(
          { chainId: chain.chainId, address: g.address, token: g.token, reason },
          "sanctions screening unavailable; sweeping anyway (SANCTIONS_FAIL_MODE=open)",
        );
        admitted.push(g);
      } else
        logger("sanctions").warn(
          { chainId: chain.chainId, address: g.address, token: g.token, reason },
          "sanctions screening unavailable; vault group waits (SANCTIONS_FAIL_MODE=closed)",
        );
      continue;
    }
    admitted.push(g);
  }
  return admitted;
}

/**
 * `detected | failed -> held` with the audit row of the match, in one transaction; false when it had moved meanwhile.
 * The business is told with the vault webhook `deposit.failed` (the spec's event for a deposit that was not
 * processed; `status: "held"` in its data), once per deposit.
 */
async function holdDeposit(
  deps: Pick<AppDeps, "db" | "now">,
  depositId: string,
  from: "detected" | "failed",
  match: { address: string; source: string },
): Promise<boolean> {
  return withTransaction(deps.db, async (client) => {
    const now = deps.now();
    const moved = await transitionDeposit(client, depositId, {
      from: ["detected", "failed"],
      to: "held",
      reason: `sanctions screening: sender ${match.address} flagged by ${match.source}`,
      now,
      set: { next_attempt_at: null },
      data: { sanctionedAddress: match.address, source: match.source },
      event: "deposit.failed",
      dedupeKey: `deposit.failed:sanctions:${depositId}`,
    });
    if (!moved) return false;
    await client.query(
      `INSERT INTO sanctions_holds (subject, deposit_id, chain_id, address, source, from_status, status, created_at)
       VALUES ('vault_deposit', $1, $2, $3, $4, $5, 'held', $6)`,
      [depositId, moved.chain_id, match.address.toLowerCase(), match.source, from, new Date(now)],
    );
    logger("sanctions").warn(
      { chainId: moved.chain_id, depositId, address: match.address, source: match.source },
      "vault deposit held: sender flagged by sanctions screening",
    );
    return true;
  });
}

/**
 * Held deposits the re-org check voided (`held -> dropped`, modules/vault/detect-deposits.ts): their open holds are
 * resolved `dropped`, with an audit row by `system`, in the caller's transaction. Without this they would be listed
 * forever and neither release nor reject could close them.
 */
export async function closeDroppedDepositHolds(client: pg.PoolClient, depositIds: string[], now: number): Promise<void> {
  if (!depositIds.length) return;
  // Locked in one order (re-orgs are rare: one transition per hold costs nothing that matters).
  const { rows } = await client.query<Pick<HoldRow, "id" | "payment_id" | "recovery_id" | "deposit_id">>(
    `SELECT h.id, h.payment_id, h.recovery_id, h.deposit_id FROM sanctions_holds h
      WHERE h.deposit_id = ANY($1::uuid[]) AND h.status = 'held'
        AND EXISTS (SELECT 1 FROM vault_deposits d WHERE d.id = h.deposit_id AND d.status = 'dropped')
      ORDER BY h.id FOR UPDATE OF h`,
    [depositIds],
  );
  for (const hold of rows)
    await resolveHold(
      client,
      hold,
      { from: ["held"], to: "dropped" },
      { action: "drop", from: "held", to: "dropped" },
      { actor: "system", reason: "the deposit's transfer is no longer indexed (re-org)" },
      now,
    );
}
