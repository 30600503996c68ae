import { zeroAddress } from "viem";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { firstLine, logger } from "../../core/log.js";
import { withTransaction } from "../../db/client.js";
import { noteRecoveryWait } from "../payments/index.js";
import { combine, releasedFor, screenAddresses, type Screening } from "./screen.js";
import { recoverySenders, type Senders } from "./senders.js";
import { sourcesFor } from "./sources.js";
import { clearWaits, recordWaits } from "./waits.js";

// Recoveries of unexpected funds (docs/sanctions.md, "Recoveries"): a recovery sweeps the whole balance of a token
// from a payment's address to its payout, so before the settler signs one (modules/settlement/recover.ts) the senders
// of what it would move are screened: whatever arrived in that token since its last sweep from the address
// (senders.ts, recoverySenders). A flagged sender holds the recovery: it stays `requested`, with `error` saying so,
// and a `sanctions_holds` row (subject `recovery`) waits for the operator (`release`: it is signed on the next pass;
// `reject`: it becomes `failed`, the funds stay at the address). An outage or an unidentified native sender leaves it
// `requested` with a backoff (SANCTIONS_FAIL_MODE=closed) or lets it go with a warning (`open`).

export type RecoveryCandidate = {
  id: string;
  paymentId: string;
  token: string;
  /** The payment's deposit address and creation time. */
  address: string;
  createdAt: Date;
};

export const RECOVERY_HELD_ERROR = "held by sanctions screening: a sender of these funds is flagged; the operator decides";

/** The ids of `recoveries` that may be signed now; flagged ones are held, unavailable or unidentified ones wait. */
export async function admitRecoveries(deps: AppDeps, chain: ActiveChain, recoveries: RecoveryCandidate[]): Promise<Set<string>> {
  const admitted = new Set<string>();
  if (!recoveries.length) return admitted;
  if (!sourcesFor(deps, chain).length) return new Set(recoveries.map((r) => r.id));
  const released = await releasedFor(
    deps,
    recoveries.map((r) => ({ paymentId: r.paymentId, recoveryId: r.id })),
  );
  const senders = new Map<string, Senders>();
  for (const [i, r] of recoveries.entries()) {
    const rel = released[i]!;
    let found: Senders;
    try {
      found = await recoverySenders(deps, chain, { address: r.address, token: r.token, since: r.createdAt });
    } catch (e) {
      // Only the native coin's search reads the chain; anything else failing is a fault, not an unknown sender.
      if (r.token.toLowerCase() !== zeroAddress) throw e;
      found = { senders: [], unidentified: [`senders not readable: ${firstLine(e)}`] };
    }
    senders.set(r.id, {
      senders: found.senders.filter((a) => !rel.addresses.has(a)),
      unidentified: rel.unidentified ? [] : found.unidentified,
    });
  }
  const byAddress = await screenAddresses(
    deps,
    chain,
    [...senders.values()].flatMap((s) => s.senders),
  );
  const done: string[] = [];
  const waiting: { r: RecoveryCandidate; s: Extract<Screening, { reason: string }> }[] = [];
  for (const r of recoveries) {
    const s = combine(senders.get(r.id)!.senders, byAddress, senders.get(r.id)!.unidentified);
    if (s.status === "clear") {
      admitted.add(r.id);
      done.push(r.id);
    } else if (s.status === "sanctioned") await holdRecovery(deps, r, s);
    else if (deps.config.SANCTIONS_FAIL_MODE === "open") {
      logger("sanctions").warn(
        { chainId: chain.chainId, recoveryId: r.id, paymentId: r.paymentId, reason: s.reason },
        `sanctions screening ${s.status}; recovering anyway (SANCTIONS_FAIL_MODE=open)`,
      );
      admitted.add(r.id);
      done.push(r.id);
    } else waiting.push({ r, s });
  }
  await clearWaits(deps.db.pool, "recovery", done);
  if (waiting.length) {
    await recordWaits(
      deps,
      "recovery",
      waiting.map(({ r, s }) => ({ id: r.id, paymentId: r.paymentId, chainId: chain.chainId, kind: s.status, reason: s.reason })),
    );
    logger("sanctions").warn(
      { chainId: chain.chainId, recoveryIds: waiting.slice(0, 20).map((w) => w.r.id), count: waiting.length, reason: waiting[0]!.s.reason },
      "sanctions screening of recoveries did not finish; they wait (SANCTIONS_FAIL_MODE=closed)",
    );
  }
  return admitted;
}

/**
 * Holds a recovery whose sender is flagged: the audit row (`sanctions_holds`, subject `recovery`, from `requested`)
 * and the recovery's `error`, in one transaction with the payment's row locked (as the signer's claim locks it).
 * False when the recovery is no longer `requested` or is held already.
 */
async function holdRecovery(
  deps: Pick<AppDeps, "db" | "now">,
  r: RecoveryCandidate,
  match: { address: string; source: string },
): Promise<boolean> {
  return withTransaction(deps.db, async (client) => {
    const now = deps.now();
    await client.query(`SELECT 1 FROM payments WHERE id = $1 FOR UPDATE`, [r.paymentId]);
    const cur = await client.query<{ status: string; chain_id: number }>(
      `SELECT status, chain_id FROM fund_recoveries WHERE id = $1 FOR UPDATE`,
      [r.id],
    );
    if (cur.rows[0]?.status !== "requested") return false;
    const inserted = await client.query(
      `INSERT INTO sanctions_holds (subject, payment_id, recovery_id, chain_id, address, source, from_status, status, created_at)
       VALUES ('recovery', $1, $2, $3, $4, $5, 'requested', 'held', $6)
       ON CONFLICT (recovery_id) WHERE status = 'held' AND recovery_id IS NOT NULL DO NOTHING`,
      [r.paymentId, r.id, cur.rows[0].chain_id, match.address.toLowerCase(), match.source, new Date(now)],
    );
    if (!inserted.rowCount) return false;
    await noteRecoveryWait(client, r.id, RECOVERY_HELD_ERROR, now);
    await clearWaits(client, "recovery", [r.id]);
    logger("sanctions").warn(
      { chainId: cur.rows[0].chain_id, recoveryId: r.id, paymentId: r.paymentId, address: match.address, source: match.source },
      "recovery held: a sender of the funds is flagged by sanctions screening",
    );
    return true;
  });
}
