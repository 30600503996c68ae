import type pg from "pg";
import { vaultSweeps } from "./schema.js";
import { enqueueVaultWebhook, type VaultWebhookEvent } from "../webhooks/index.js";
import { DEPOSIT_SELECT } from "./deposits.js";
import { depositWebhookData, type DepositRow, type DepositStatus } from "./serialize-deposit.js";
import { statusMachine, type Moves } from "../../db/status-machine.js";

export type SweepStatus = "signed" | "sent" | "mined" | "completed" | "reverted" | "dropped";

/**
 * A Vault sweep transaction: `signed` → `sent` → `mined` → `completed` (its Swept events indexed and its deposits
 * completed), or `reverted` (its deposits fail), or `dropped` (its nonce went to another transaction; its deposits
 * wait for the next sweep).
 */
export const SWEEP_MOVES: Moves<SweepStatus> = {
  signed: ["sent", "mined", "reverted", "dropped"],
  sent: ["mined", "reverted", "dropped"],
  mined: ["completed"],
  completed: [],
  reverted: [],
  dropped: [],
};

/** The one place a Vault sweep changes status, with its audit row in `vault_sweep_events` (db/status-machine.ts). */
export const transitionSweep = statusMachine<{ id: string; status: SweepStatus }, SweepStatus, typeof vaultSweeps>({
  table: vaultSweeps,
  audit: "vault_sweep_events",
  subject: "sweep_id",
  moves: SWEEP_MOVES,
});

/**
 * The one way a deposit changes status: locks the row, checks `from`, writes the new status with `set`
 * (column -> value), an audit row (`vault_deposit_events`) and, with `event`, the Vault webhook in the outbox,
 * all in the caller's transaction. Returns the updated row, or null when the deposit was not in `from`
 * (someone else moved it: nothing is written, so a repeated pass changes nothing twice).
 */
export async function transitionDeposit(
  client: pg.PoolClient,
  id: string,
  t: {
    from: readonly DepositStatus[];
    to: DepositStatus;
    reason: string;
    now: number;
    set?: Record<string, unknown>;
    /** Vault webhook; sent once per deposit and event (dedupe key `event:depositId`, unless `dedupeKey`). */
    event?: VaultWebhookEvent;
    dedupeKey?: string;
    data?: Record<string, unknown>;
  },
): Promise<DepositRow | null> {
  const cur = await client.query<{ status: DepositStatus }>(`SELECT status FROM vault_deposits WHERE id = $1 FOR UPDATE`, [id]);
  const from = cur.rows[0]?.status;
  if (!from || !t.from.includes(from)) return null;
  const set = Object.entries(t.set ?? {});
  const assignments = set.map(([col, _], i) => `${col} = $${i + 4}`);
  await client.query(`UPDATE vault_deposits SET status = $2, updated_at = $3${assignments.map((a) => `, ${a}`).join("")} WHERE id = $1`, [
    id,
    t.to,
    new Date(t.now),
    ...set.map(([, v]) => v),
  ]);
  await client.query(
    `INSERT INTO vault_deposit_events (deposit_id, from_status, to_status, reason, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
    [id, from, t.to, t.reason, t.data ? JSON.stringify(t.data) : null, new Date(t.now)],
  );
  const row = (await client.query<DepositRow>(`${DEPOSIT_SELECT} WHERE d.id = $1`, [id])).rows[0]!;
  if (t.event)
    await enqueueVaultWebhook(client, {
      merchantId: row.merchant_id,
      vaultId: row.vault_id,
      depositId: row.id,
      event: t.event,
      data: depositWebhookData(row, t.now),
      dedupeKey: t.dedupeKey ?? `${t.event}:${row.id}`,
      now: t.now,
    });
  return row;
}
