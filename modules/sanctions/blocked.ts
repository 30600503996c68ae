import type pg from "pg";
import type { Blocked } from "../payments/index.js";

// Funds sanctions screening blocks on a payment's address (docs/sanctions.md, "Recoveries"): every token of a payment
// that is held (`sanctioned`) or was rejected by the operator, and the token of a recovery that is held or was
// rejected. The recovery of unexpected funds refuses them (modules/payments/recover.ts answers 409
// SANCTIONS_HELD_MESSAGE, modules/payments/funds-screening.ts; modules/settlement/recover.ts checks again under the payment's row lock before signing), and
// the payment list shows them `recoverable: false` (modules/payments/unexpected-funds.ts).

type Q = Pick<pg.PoolClient, "query">;

/** What screening blocks on each payment of `paymentIds` (absent: nothing). Tokens lowercase. */
export async function sanctionsBlockedFunds(db: Q, paymentIds: string[]): Promise<Map<string, Blocked>> {
  const out = new Map<string, Blocked>();
  if (!paymentIds.length) return out;
  const { rows } = await db.query<{ payment_id: string; subject: string; token: string | null }>(
    `SELECT h.payment_id, h.subject, lower(r.token) AS token FROM sanctions_holds h LEFT JOIN fund_recoveries r ON r.id = h.recovery_id
      WHERE h.payment_id = ANY($1::uuid[]) AND h.status IN ('held', 'rejected')`,
    [paymentIds],
  );
  for (const r of rows) {
    const b = out.get(r.payment_id) ?? { all: false, tokens: new Set<string>() };
    if (r.subject === "payment") b.all = true;
    else if (r.token) b.tokens.add(r.token);
    out.set(r.payment_id, b);
  }
  return out;
}
