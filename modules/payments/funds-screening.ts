import type pg from "pg";

/** What screening blocks on one payment's address: every token (`all`), or these tokens (lowercase). */
export type Blocked = { all: boolean; tokens: Set<string> };

/** The 409 of a recovery of funds that sanctions screening holds or the operator rejected. */
export const SANCTIONS_HELD_MESSAGE = "Payment funds are held by sanctions screening";

/**
 * What payments need of sanctions screening: which funds on their addresses may not be recovered. The sanctions
 * module sits above payments (it moves payments to `sanctioned`), so it is handed in: flows/payment-views.ts wires
 * modules/sanctions for the API, the dashboard and the CLI; there is no unscreened default.
 */
export type FundsScreening = {
  blockedFunds(db: Pick<pg.PoolClient, "query">, paymentIds: string[]): Promise<Map<string, Blocked>>;
};

/** Whether screening blocks `token` (any case) on the payment. */
export function isBlocked(blocked: Map<string, Blocked>, paymentId: string, token: string): boolean {
  const b = blocked.get(paymentId);
  return !!b && (b.all || b.tokens.has(token.toLowerCase()));
}
