import { getAddress, type Hex } from "viem";
import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid, Unavailable } from "../../core/errors.js";
import { withTransaction } from "../../db/client.js";
import { gasTankBalance } from "../gas-tank/index.js";
import { PriceUnavailableError } from "../pricing/index.js";
import { isTransportError } from "../pricing/index.js";
import { recoveryCharge } from "./recovery-fee.js";
import { isBlocked, SANCTIONS_HELD_MESSAGE, type FundsScreening } from "./funds-screening.js";
import { authenticate, type Caller } from "../merchants/index.js";
import { merchantPayment } from "./merchant-payment.js";
import { fmt } from "./serialize.js";
import type { PaymentRow } from "./types.js";
import { OPEN_RECOVERY_STATUSES, recoverableUnits, tokenMetadataFor } from "./unexpected-funds.js";

export type FundRecovery = {
  recoveryId: string;
  paymentId: string;
  /** Checksummed, as in the list; the zero address for the native coin. */
  token: string;
  status: string;
  /** Decimal string of `units`; null when the token's decimals are unknown. */
  amount: string | null;
  units: string;
  /** The payout the deposit address commits to: the only place a sweep can pay. */
  payout: string;
};

type RecoveryRow = { id: string; payment_id: string; token: string; status: string; requested_units: string };

const OPEN = `(${OPEN_RECOVERY_STATUSES.map((s) => `'${s}'`).join(", ")})`;

const INVALID_TOKEN = "Invalid token address format";
/** The recovery's fee is charged to the Gas Tank (a token without a price, or dust), which cannot pay it. */
export const RECOVERY_TANK_SHORT = "Gas Tank balance too low to pay for this recovery";
/** POST /v1/payments/{paymentId}/recover `{token}`: a token contract, or the zero address for the native coin (lowercased). */
export const recoverFundsBody = z.object(
  {
    token: z
      .string({ error: INVALID_TOKEN })
      .regex(/^0x[0-9a-fA-F]{40}$/, INVALID_TOKEN) // viem's isAddress, not strict: any case
      .transform((t) => t.toLowerCase() as Hex),
  },
  { error: INVALID_TOKEN },
);

/**
 * POST /v1/payments/{paymentId}/recover, GraphQL `recoverFunds` and `cli payment recover`: the caller, the
 * token (400), the payment (404, also for another merchant's), then something to recover in that token (409).
 * Queues a recovery that the settler sends (modules/settlement/recover.ts): the factory's sweep of the whole
 * balance of that token to the committed payout, charged as a payment would be (recovery-fee.ts; 409 when the fee
 * falls to the Gas Tank and the tank cannot pay it). Asking again while one is in flight answers it.
 */
export async function recoverFunds(
  deps: Pick<AppDeps, "db" | "now" | "chains" | "clients" | "config">,
  caller: Caller,
  paymentId: string,
  body: unknown,
  screening: FundsScreening,
): Promise<FundRecovery> {
  const merchant = await authenticate(deps, caller);
  const parsed = recoverFundsBody.safeParse(body);
  if (!parsed.success) throw new Invalid(INVALID_TOKEN);
  const { token } = parsed.data;
  const p = await merchantPayment(deps.db.pool, merchant.id, paymentId);
  // Funds held (or rejected) by sanctions screening leave only by the operator's release (docs/sanctions.md): checked
  // here, again under the payment's row lock when the recovery is recorded, and by the settler before it signs.
  if (isBlocked(await screening.blockedFunds(deps.db.pool, [paymentId]), paymentId, token)) throw new Conflict(SANCTIONS_HELD_MESSAGE);

  const open = await openRecovery(deps, paymentId, token);
  if (open) return view(deps, p, open);
  let units: bigint;
  try {
    units = await recoverableUnits(deps, p, token);
  } catch (e) {
    if (isTransportError(e)) throw new Unavailable("Chain RPC unavailable");
    throw e;
  }
  if (units === 0n) throw new Conflict("No unexpected funds to recover in this token");
  // The charge is computed again, on what is there then, when the sweep is signed; refused here when it cannot be paid.
  const charge = await recoveryCharge(deps, p, token, units).catch((e: unknown) => {
    if (e instanceof PriceUnavailableError || isTransportError(e)) throw new Unavailable("Oracle price unavailable");
    throw e;
  });
  if (charge.kind === "gasTank" && (await gasTankBalance(deps.db.pool, merchant.id)) < charge.micros)
    throw new Conflict(RECOVERY_TANK_SHORT);
  // The partial unique index allows one open recovery per (payment, token): a concurrent request gets that one.
  const inserted = await withTransaction(deps.db, async (client) => {
    await client.query(`SELECT 1 FROM payments WHERE id = $1 FOR UPDATE`, [paymentId]);
    if (isBlocked(await screening.blockedFunds(client, [paymentId]), paymentId, token)) throw new Conflict(SANCTIONS_HELD_MESSAGE);
    return client.query<RecoveryRow>(
      `INSERT INTO fund_recoveries (payment_id, merchant_id, chain_id, token, status, requested_units, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'requested', $5, $6, $6)
       ON CONFLICT (payment_id, token) WHERE status IN ${OPEN} DO NOTHING
       RETURNING *`,
      [paymentId, merchant.id, p.chain_id, token, units.toString(), new Date(deps.now())],
    );
  });
  const row = inserted.rows[0] ?? (await openRecovery(deps, paymentId, token));
  if (!row) throw new Error("recovery vanished after insert");
  return view(deps, p, row);
}

async function openRecovery(deps: Pick<AppDeps, "db">, paymentId: string, token: Hex): Promise<RecoveryRow | undefined> {
  const { rows } = await deps.db.pool.query<RecoveryRow>(
    `SELECT * FROM fund_recoveries WHERE payment_id = $1 AND token = $2 AND status IN ${OPEN}`,
    [paymentId, token],
  );
  return rows[0];
}

async function view(deps: Pick<AppDeps, "db" | "chains" | "clients">, p: PaymentRow, r: RecoveryRow): Promise<FundRecovery> {
  const { decimals } = await tokenMetadataFor(deps, p, r.token as Hex);
  return {
    recoveryId: r.id,
    paymentId: p.id,
    token: getAddress(r.token),
    status: r.status,
    amount: decimals === null ? null : fmt(r.requested_units, decimals),
    units: r.requested_units,
    payout: p.merchant_address,
  };
}
