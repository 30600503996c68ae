import type pg from "pg";

// Columns of a merchant's row that other modules decide (its referring agent, its Gas Tank alert). They call these
// so the merchants table keeps one writer.

type Q = Pick<pg.Pool, "query">;

/**
 * Links a merchant to the agent that referred it, unless another agent already refers it (or `replace`).
 * Returns false when nothing changed: no such merchant, or another agent's.
 */
export async function setMerchantAgent(db: Q, merchantId: string, agentId: string, replace: boolean): Promise<boolean> {
  const { rowCount } = await db.query(`UPDATE merchants SET agent_id = $2 WHERE id = $1 AND (agent_id IS NULL OR agent_id = $2 OR $3)`, [
    merchantId,
    agentId,
    replace,
  ]);
  return Boolean(rowCount);
}

/** Sets (null: clears) the Gas Tank balance, in USDT micros, below which the dashboard warns the merchant. */
export async function setMerchantGasTankAlert(db: Q, merchantId: string, micros: bigint | null): Promise<void> {
  await db.query(`UPDATE merchants SET gas_tank_alert_micros = $2 WHERE id = $1`, [merchantId, micros === null ? null : micros.toString()]);
}
