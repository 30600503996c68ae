import type { Db } from "../../db/client.js";
import { indexerProgress } from "../../db/indexer-status.js";

// What the background processors of this test file said lately (errors of passes, listener reconnects), so a
// timed-out wait says why instead of only what it waited for. The processors' output is not printed by default:
// DEBUG_PROCESSORS=1 prints it as it comes.

const LINES = 20;
const recent: string[] = [];

/** Records one line of processor output (and prints it under DEBUG_PROCESSORS). */
export function noteProcessorLog(line: string): void {
  if (process.env.DEBUG_PROCESSORS) console.error(line);
  recent.push(`${new Date().toISOString()} ${line.split("\n").slice(0, 3).join(" | ")}`);
  if (recent.length > LINES) recent.shift();
}

/** The last lines recorded, for an error message ("" when none). */
export function recentProcessorLog(): string {
  return recent.length ? `\nlast processor output:\n${recent.join("\n")}` : "";
}

/** Where a payment stands, for a timed-out wait's message: its row's status, its transitions, its sweeps and waits. */
export async function paymentState(db: Db, paymentId: string): Promise<unknown> {
  const one = async (sql: string) => (await db.pool.query(sql, [paymentId])).rows;
  return {
    payment: await one(`SELECT status, received_units, paid_at FROM payments WHERE id = $1`),
    events: await one(`SELECT from_status, to_status, reason, created_at FROM payment_events WHERE payment_id = $1 ORDER BY id`),
    settlements: await one(`SELECT tx_hash, nonce, status, updated_at FROM settlements WHERE $1::uuid = ANY(payment_ids)`),
    screenings: await one(`SELECT kind, reason, attempts, retry_at FROM sanctions_screenings WHERE payment_id = $1`),
    indexed: await indexerProgress(db).catch((e) => String(e)),
  };
}
