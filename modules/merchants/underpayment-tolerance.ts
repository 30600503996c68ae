import type pg from "pg";
import { getAddress, isAddress } from "viem";
import { z } from "zod";
import { findToken, type ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { Invalid } from "../../core/errors.js";
import { formatAmount, tryParseAmount } from "../../core/money.js";
import { firstIssue, objectError, UNKNOWN_FIELDS } from "../../core/zod-issues.js";
import { prepared, withTransaction } from "../../db/client.js";
import { authenticate, type Caller } from "./authenticate.js";

// A merchant's underpayment tolerance (docs/payments.md "Underpayment tolerance"): GET/PUT /v1/settings/underpayment-tolerance
// and `npm run cli -- merchant tolerance`. A share of the amount due in basis points and/or an absolute amount per
// chain and token; modules/payments/tolerance.ts turns them into a payment's tolerance when it is created.

/** At most 5 % of the amount due. */
export const MAX_TOLERANCE_BPS = 500;

export const NOT_AN_OBJECT = "Invalid request body";
export const BPS_MESSAGE = `bps must be a whole number of basis points between 0 and ${MAX_TOLERANCE_BPS}`;
export const AMOUNTS_MESSAGE = "amounts must be an array of {chainId, token, amount}";
export const CHAIN_MESSAGE = "chainId must be a chain id string";
export const TOKEN_MESSAGE = "Invalid Token address format";
export const AMOUNT_MESSAGE = "amount must be a positive decimal string";
export const UNSUPPORTED_NETWORK = "Unsupported network";
export const UNSUPPORTED_TOKEN = "Unsupported token";
export const DUPLICATE_TOKEN = "amounts lists a token twice";
/** Tokens one merchant may give an absolute tolerance. */
export const MAX_TOLERANCE_AMOUNTS = 100;
export const TOO_MANY_AMOUNTS = `amounts may list at most ${MAX_TOLERANCE_AMOUNTS} tokens`;
export const precisionMessage = (symbol: string, decimals: number) => `amount must have at most ${decimals} fraction digits for ${symbol}`;

const amountEntry = z.strictObject(
  {
    chainId: z.string({ error: CHAIN_MESSAGE }).regex(/^[1-9][0-9]{0,9}$/, CHAIN_MESSAGE),
    token: z.string({ error: TOKEN_MESSAGE }).refine((s) => isAddress(s, { strict: false }), TOKEN_MESSAGE),
    amount: z
      .string({ error: AMOUNT_MESSAGE })
      .regex(/^\d+(\.\d+)?$/, AMOUNT_MESSAGE)
      .refine((s) => /[1-9]/.test(s), AMOUNT_MESSAGE),
  },
  { error: objectError(AMOUNTS_MESSAGE) },
);

/**
 * PUT /v1/settings/underpayment-tolerance: the whole setting (what is not sent is cleared). `bps` is required; `amounts`
 * (default none) gives a token an absolute tolerance, at most one entry per chain and token.
 */
export const underpaymentToleranceBody = z.strictObject(
  {
    bps: z.number({ error: BPS_MESSAGE }).int(BPS_MESSAGE).min(0, BPS_MESSAGE).max(MAX_TOLERANCE_BPS, BPS_MESSAGE),
    amounts: z.array(amountEntry, { error: AMOUNTS_MESSAGE }).max(MAX_TOLERANCE_AMOUNTS, TOO_MANY_AMOUNTS).optional(),
  },
  { error: objectError(NOT_AN_OBJECT) },
);

/** The order the API reports a body's problems in: unknown fields first, then the fields as listed. */
const ORDER = [UNKNOWN_FIELDS, "bps", "amounts", "chainId", "token", "amount"];

export type ToleranceAmount = { chainId: string; token: string; symbol: string; decimals: number; amount: string };
/** The setting as the API shows it. */
export type UnderpaymentTolerance = { bps: number; amounts: ToleranceAmount[] };

type Deps = Pick<AppDeps, "db" | "now" | "chains">;
type AmountRow = { chain_id: number; token_address: string; token_symbol: string; token_decimals: number; units: string };

async function readSetting(db: Pick<pg.Pool, "query">, merchantId: string): Promise<UnderpaymentTolerance> {
  const [m, a] = await Promise.all([
    db.query<{ bps: number }>(`SELECT underpayment_tolerance_bps AS bps FROM merchants WHERE id = $1`, [merchantId]),
    db.query<AmountRow>(
      `SELECT chain_id, token_address, token_symbol, token_decimals, units FROM underpayment_tolerance_amounts
        WHERE merchant_id = $1 ORDER BY chain_id, token_address`,
      [merchantId],
    ),
  ]);
  return {
    bps: m.rows[0]?.bps ?? 0,
    amounts: a.rows.map((r) => ({
      chainId: String(r.chain_id),
      token: getAddress(r.token_address),
      symbol: r.token_symbol,
      decimals: r.token_decimals,
      amount: formatAmount(BigInt(r.units), r.token_decimals),
    })),
  };
}

/**
 * The caller's setting. Throws Unauthorized (NotFound for an unknown merchant id of the operator).
 *
 * @example
 * await getUnderpaymentTolerance(deps, { apiKey }); // { bps: 0, amounts: [] } until set
 */
export async function getUnderpaymentTolerance(deps: Pick<Deps, "db" | "now">, caller: Caller): Promise<UnderpaymentTolerance> {
  const merchant = await authenticate(deps, caller);
  return readSetting(deps.db.pool, merchant.id);
}

/**
 * Replaces the caller's setting with `body` (underpaymentToleranceBody), checked against the served chains and their
 * registry tokens (an absolute amount needs the token's decimals). Payments already created keep the tolerance they
 * were created with. Throws Unauthorized, or Invalid with the first problem.
 */
export async function putUnderpaymentTolerance(deps: Deps, caller: Caller, body: unknown): Promise<UnderpaymentTolerance> {
  const merchant = await authenticate(deps, caller);
  const parsed = underpaymentToleranceBody.safeParse(body === undefined ? {} : body);
  if (!parsed.success) throw new Invalid(firstIssue(parsed.error.issues, ORDER).message);
  const entries = resolveAmounts(deps.chains, parsed.data.amounts ?? []);
  return withTransaction(deps.db, async (client) => {
    // The merchant row first: concurrent PUTs of one merchant take turns, the last one wins whole.
    await client.query(`UPDATE merchants SET underpayment_tolerance_bps = $2 WHERE id = $1`, [merchant.id, parsed.data.bps]);
    await client.query(`DELETE FROM underpayment_tolerance_amounts WHERE merchant_id = $1`, [merchant.id]);
    if (entries.length)
      await client.query(
        `INSERT INTO underpayment_tolerance_amounts (merchant_id, chain_id, token_address, token_symbol, token_decimals, units)
         SELECT $1::uuid, * FROM unnest($2::int[], $3::text[], $4::text[], $5::int[], $6::numeric[])`,
        [
          merchant.id,
          entries.map((e) => e.chainId),
          entries.map((e) => e.token),
          entries.map((e) => e.symbol),
          entries.map((e) => e.decimals),
          entries.map((e) => e.units.toString()),
        ],
      );
    return readSetting(client, merchant.id);
  });
}

type Entry = { chainId: number; token: string; symbol: string; decimals: number; units: bigint };

/** The body's amounts against the served chains' registry tokens, in order: the first problem is thrown. */
function resolveAmounts(chains: readonly ActiveChain[], amounts: z.output<typeof amountEntry>[]): Entry[] {
  const out: Entry[] = [];
  for (const a of amounts) {
    const chain = chains.find((c) => c.chainId === Number(a.chainId));
    if (!chain) throw new Invalid(UNSUPPORTED_NETWORK);
    const token = findToken(chain, a.token);
    if (!token) throw new Invalid(UNSUPPORTED_TOKEN);
    const units = tryParseAmount(a.amount, token.decimals, { strict: true });
    if (units === null || units <= 0n) throw new Invalid(precisionMessage(token.symbol, token.decimals));
    const address = token.address.toLowerCase();
    if (out.some((e) => e.chainId === chain.chainId && e.token === address)) throw new Invalid(DUPLICATE_TOKEN);
    out.push({ chainId: chain.chainId, token: address, symbol: token.symbol, decimals: token.decimals, units });
  }
  return out;
}

/**
 * A merchant's tolerance terms for a new payment in `token` on `chainId` (create.ts): its bps and its absolute
 * amount for that token (0 when none).
 */
export async function toleranceTermsOf(
  db: Pick<pg.Pool, "query">,
  merchantId: string,
  chainId: number,
  token: string,
): Promise<{ bps: number; absoluteUnits: bigint }> {
  const { rows } = await db.query<{ bps: number; units: string | null }>(
    prepared(
      `SELECT m.underpayment_tolerance_bps AS bps,
              (SELECT a.units FROM underpayment_tolerance_amounts a
                WHERE a.merchant_id = m.id AND a.chain_id = $2 AND a.token_address = $3) AS units
         FROM merchants m WHERE m.id = $1`,
      [merchantId, chainId, token.toLowerCase()],
    ),
  );
  return { bps: rows[0]?.bps ?? 0, absoluteUnits: BigInt(rows[0]?.units ?? 0) };
}
