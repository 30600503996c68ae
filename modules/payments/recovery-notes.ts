import type pg from "pg";

// A recovery's `error` is what an operator reads about why it waits. Other modules (sanctions) set and clear
// their reason through these, so fund_recoveries keeps one writer.

/** Sets a recovery's waiting reason (in the caller's transaction). */
export async function noteRecoveryWait(client: pg.ClientBase, recoveryId: string, reason: string, now: number): Promise<void> {
  await client.query(`UPDATE fund_recoveries SET error = $2, updated_at = $3 WHERE id = $1`, [recoveryId, reason, new Date(now)]);
}

/** Clears a recovery's waiting reason when it is still `reason` (another error stays); returns its status. */
export async function clearRecoveryWait(client: pg.ClientBase, recoveryId: string, reason: string, now: number): Promise<string> {
  const { rows } = await client.query<{ status: string }>(
    `UPDATE fund_recoveries SET error = CASE WHEN error = $2 THEN NULL ELSE error END, updated_at = $3 WHERE id = $1 RETURNING status`,
    [recoveryId, reason, new Date(now)],
  );
  return rows[0]!.status;
}
