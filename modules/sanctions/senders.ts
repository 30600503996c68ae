import { zeroAddress } from "viem";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import type { PaymentRow } from "../payments/index.js";
import { nativeSenders } from "./native-senders.js";

// Who paid (docs/sanctions.md, "Who is screened"):
// - a token payment: the `from` of every indexed Transfer of the payment's token to its address (all of them, confirmed
//   or not: the sweep moves the whole balance), plus the payer of a cross-chain order that filled it (bridge_orders).
//   Transfers of 0 are left out: anyone can emit one "from" any address (a zero transferFrom needs no allowance), and
//   a listed address named that way must not hold a payment;
// - a native-coin payment (no log): the `from` of the transactions that sent coin straight to its address since the
//   payment was created (modules/sanctions/native-senders.ts); coin whose sender cannot be identified is reported;
// - a recovery of unexpected funds: the same, for the recovered token (or coin), counting only what arrived since the
//   last sweep of that token from the address (what left with a sweep is not what the recovery moves);
// - a vault deposit: the `from` of its indexed Transfer (a deposit recorded from the address's balance has none).

export type Senders = {
  /** Lowercase addresses, without the zero address (a mint has no sender to screen). */
  senders: string[];
  /** What arrived without an identifiable sender (native coin only); empty when everything is attributed. */
  unidentified: string[];
};

const TOKEN_SENDERS = (views: string) => `
  SELECT p.id, array_agg(DISTINCT t."from") FILTER (WHERE t."from" IS NOT NULL) AS senders
    FROM unnest($2::uuid[], $3::text[], $4::text[]) AS p(id, address, token)
    LEFT JOIN "${views}".transfer t ON t.chain_id = $1 AND t."to" = p.address AND t.token = p.token AND t.amount > 0
   GROUP BY p.id`;

const isNative = (token: string) => token.toLowerCase() === zeroAddress;
const tidy = (s: Senders): Senders => ({
  senders: [...new Set(s.senders.map((a) => a.toLowerCase()))].filter((a) => a !== zeroAddress),
  unidentified: s.unidentified,
});

/** The token payments' senders (keyed by id), from the indexed transfers: one query. */
export async function tokenPaymentSenders(
  deps: Pick<AppDeps, "db">,
  chain: ActiveChain,
  payments: PaymentRow[],
): Promise<Map<string, Senders>> {
  const out = new Map<string, Senders>();
  const tokens = payments.filter((p) => !isNative(p.token_address));
  if (!tokens.length) return out;
  const { rows } = await deps.db.pool.query<{ id: string; senders: string[] | null }>(TOKEN_SENDERS(deps.db.viewsSchema), [
    chain.chainId,
    tokens.map((p) => p.id),
    tokens.map((p) => p.recipient_address.toLowerCase()),
    tokens.map((p) => p.token_address.toLowerCase()),
  ]);
  for (const r of rows) out.set(r.id, tidy({ senders: r.senders ?? [], unidentified: [] }));
  return out;
}

/** A native-coin payment's senders since it was created. Throws when the chain cannot be read (the caller's outage). */
export async function nativePaymentSenders(
  deps: Pick<AppDeps, "db" | "clients" | "config">,
  chain: ActiveChain,
  p: PaymentRow,
): Promise<Senders> {
  return tidy(await nativeSenders(deps, chain, { address: p.recipient_address, since: p.created_at }));
}

/** The payers of cross-chain orders that delivered (or may have delivered) each payment's funds, keyed by payment id. */
export async function bridgePayers(deps: Pick<AppDeps, "db">, paymentIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!paymentIds.length) return out;
  const { rows } = await deps.db.pool.query<{ payment_id: string; payer: string }>(
    `SELECT DISTINCT payment_id, lower(payer) AS payer FROM bridge_orders
      WHERE payment_id = ANY($1::uuid[]) AND status IN ('created', 'fulfilled', 'claimed_unlock')`,
    [paymentIds],
  );
  for (const o of rows) out.set(o.payment_id, [...(out.get(o.payment_id) ?? []), o.payer]);
  return out;
}

/**
 * The senders of what a recovery of `token` would sweep from a payment's address: what arrived since the last sweep of
 * that token from the address (the indexed `Swept` events), or since the payment was created. Throws when the chain
 * cannot be read (native coin).
 */
export async function recoverySenders(
  deps: Pick<AppDeps, "db" | "clients" | "config">,
  chain: ActiveChain,
  r: { address: string; token: string; since: Date },
): Promise<Senders> {
  const address = r.address.toLowerCase();
  const token = r.token.toLowerCase();
  const views = deps.db.viewsSchema;
  const { rows: swept } = await deps.db.pool.query<{ block: string | null }>(
    `SELECT max(block_number)::text AS block FROM "${views}".sweep WHERE chain_id = $1 AND wallet = $2 AND token = $3`,
    [chain.chainId, address, token],
  );
  const after = swept[0]?.block ?? null;
  if (isNative(token))
    return tidy(await nativeSenders(deps, chain, { address, since: r.since, fromBlock: after === null ? undefined : BigInt(after) }));
  // Transfers in the sweep's own block are counted too (their order in the block is not looked at: screening more is safe).
  const { rows } = await deps.db.pool.query<{ sender: string }>(
    `SELECT DISTINCT "from" AS sender FROM "${views}".transfer
      WHERE chain_id = $1 AND "to" = $2 AND token = $3 AND amount > 0 ${after === null ? "" : "AND block_number >= $4"}`,
    after === null ? [chain.chainId, address, token] : [chain.chainId, address, token, after],
  );
  return tidy({ senders: rows.map((x) => x.sender), unidentified: [] });
}

/** The sender of each vault deposit's transfer (keyed by deposit id); deposits without an indexed transfer are absent. */
export async function depositSenders(deps: Pick<AppDeps, "db">, depositIds: string[]): Promise<Map<string, string>> {
  if (!depositIds.length) return new Map();
  const { rows } = await deps.db.pool.query<{ id: string; sender: string }>(
    `SELECT d.id, t."from" AS sender FROM vault_deposits d JOIN "${deps.db.viewsSchema}".transfer t ON t.id = d.transfer_id
      WHERE d.id = ANY($1::uuid[])`,
    [depositIds],
  );
  return new Map(rows.filter((r) => r.sender.toLowerCase() !== zeroAddress).map((r) => [r.id, r.sender.toLowerCase()]));
}
