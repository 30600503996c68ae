import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { Db } from "../../db/client.js";
import { Conflict, Forbidden, Invalid, NotFound } from "../../core/errors.js";
import type { AppDeps, MerchantAgent } from "../../core/deps.js";
import { authenticate, type Caller, setMerchantAgent } from "../merchants/index.js";
import { firstIssue } from "../../core/zod-issues.js";
import { MARKUP_MESSAGE, UPDATE_ORDER, updateAgentBody } from "./bodies.js";

/** An agent as the API shows it to itself (GET /v1/agent). */
export type Agent = {
  agentId: string;
  referralCode: string;
  markupBps: number;
  markupCapBps: number;
  platformShareBps: number;
  payoutAddress: string | null;
};

type AgentRow = {
  merchant_id: string;
  referral_code: string;
  markup_bps: number;
  markup_cap_bps: number;
  platform_share_bps: number;
  payout_address: string | null;
};

const toAgent = (r: AgentRow): Agent => ({
  agentId: r.merchant_id,
  referralCode: r.referral_code,
  markupBps: r.markup_bps,
  markupCapBps: r.markup_cap_bps,
  platformShareBps: r.platform_share_bps,
  payoutAddress: r.payout_address,
});

export const NOT_AN_AGENT = "Not an agent account";
export const UNKNOWN_REFERRAL = "Unknown referral code";

/** Referral codes: 10 characters of an alphabet without look-alikes (0/O, 1/I/L), ~50 bits. */
const CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ";
function referralCode(): string {
  const bytes = randomBytes(10);
  return Array.from(bytes, (b) => CODE_ALPHABET[b % CODE_ALPHABET.length]).join("");
}

const bpsIn = (v: number, max: number) => Number.isInteger(v) && v >= 0 && v <= max;

/**
 * Makes a merchant account an agent (operator, CLI): a referral code, a markup cap and a share of its referred
 * merchants' platform fees. Throws NotFound for an unknown merchant, Conflict when it is an agent already.
 *
 * @example
 * const agent = await createAgent(db, merchantId, { markupCapBps: 100, platformShareBps: 3000 });
 */
export async function createAgent(db: Db, merchantId: string, terms: { markupCapBps: number; platformShareBps: number }): Promise<Agent> {
  if (!bpsIn(terms.markupCapBps, 10_000)) throw new Invalid("Markup cap must be a whole number of basis points between 0 and 10000");
  if (!bpsIn(terms.platformShareBps, 10_000))
    throw new Invalid("Platform fee share must be a whole number of basis points between 0 and 10000");
  const exists = await db.pool.query(`SELECT 1 FROM merchants WHERE id = $1`, [merchantId]);
  if (!exists.rowCount) throw new NotFound("Merchant not found");
  const { rows } = await db.pool.query<AgentRow>(
    `INSERT INTO agents (merchant_id, referral_code, markup_cap_bps, platform_share_bps) VALUES ($1, $2, $3, $4)
     ON CONFLICT (merchant_id) DO NOTHING RETURNING *`,
    [merchantId, referralCode(), terms.markupCapBps, terms.platformShareBps],
  );
  if (!rows[0]) throw new Conflict("Merchant is an agent already");
  return toAgent(rows[0]);
}

/** The agent of account `merchantId`, or null when the account is not an agent. */
export async function findAgent(db: Pick<pg.Pool, "query">, merchantId: string): Promise<Agent | null> {
  const { rows } = await db.query<AgentRow>(`SELECT * FROM agents WHERE merchant_id = $1`, [merchantId]);
  return rows[0] ? toAgent(rows[0]) : null;
}

/** findAgent(), or NotFound `Not an agent account`. */
export async function requireAgent(db: Pick<pg.Pool, "query">, merchantId: string): Promise<Agent> {
  const agent = await findAgent(db, merchantId);
  if (!agent) throw new NotFound(NOT_AN_AGENT);
  return agent;
}

/**
 * The agent behind an API request: the key's account, which must be an agent. Throws Unauthorized, or Forbidden
 * `Not an agent account`.
 */
export async function agentOfCaller(deps: Pick<AppDeps, "db" | "now">, caller: Caller): Promise<Agent> {
  const merchant = await authenticate(deps, caller);
  const agent = await findAgent(deps.db.pool, merchant.id);
  if (!agent) throw new Forbidden(NOT_AN_AGENT);
  return agent;
}

/** The referring agent's current terms for a merchant's new payment (null: not referred). */
export async function agentTermsOf(db: Pick<pg.Pool, "query">, merchantId: string): Promise<MerchantAgent | null> {
  const { rows } = await db.query<{ id: string; markup_bps: number; platform_share_bps: number }>(
    `SELECT a.merchant_id AS id, a.markup_bps, a.platform_share_bps FROM merchants m JOIN agents a ON a.merchant_id = m.agent_id WHERE m.id = $1`,
    [merchantId],
  );
  const r = rows[0];
  return r ? { id: r.id, markupBps: r.markup_bps, platformShareBps: r.platform_share_bps } : null;
}

/** The agent whose referral code this is (sign-up), or Invalid `Unknown referral code`. Codes are case-insensitive. */
export async function agentByReferralCode(db: Pick<pg.Pool, "query">, code: string): Promise<string> {
  const { rows } = await db.query<{ merchant_id: string }>(`SELECT merchant_id FROM agents WHERE referral_code = $1`, [
    code.trim().toUpperCase(),
  ]);
  if (!rows[0]) throw new Invalid(UNKNOWN_REFERRAL);
  return rows[0].merchant_id;
}

/**
 * Attaches a merchant to an agent (operator, CLI; sign-up with a referral code does it at creation). An agent cannot
 * refer itself, and a merchant keeps the agent it has: Conflict, unless `replace` (the operator moving it).
 */
export async function attachMerchant(db: Db, merchantId: string, agentId: string, opts: { replace?: boolean } = {}): Promise<void> {
  if (merchantId === agentId) throw new Invalid("An agent cannot refer its own account");
  await requireAgent(db.pool, agentId);
  if (!(await setMerchantAgent(db.pool, merchantId, agentId, opts.replace === true))) {
    const exists = await db.pool.query(`SELECT 1 FROM merchants WHERE id = $1`, [merchantId]);
    if (!exists.rowCount) throw new NotFound("Merchant not found");
    throw new Conflict("Merchant is referred by another agent");
  }
}

/** Sets the operator's terms of an agent (CLI); a markup above a lowered cap is lowered to it. */
export async function setAgentTerms(db: Db, agentId: string, terms: { markupCapBps?: number; platformShareBps?: number }): Promise<Agent> {
  if (terms.markupCapBps !== undefined && !bpsIn(terms.markupCapBps, 10_000))
    throw new Invalid("Markup cap must be a whole number of basis points between 0 and 10000");
  if (terms.platformShareBps !== undefined && !bpsIn(terms.platformShareBps, 10_000))
    throw new Invalid("Platform fee share must be a whole number of basis points between 0 and 10000");
  const { rows } = await db.pool.query<AgentRow>(
    `UPDATE agents SET markup_cap_bps = coalesce($2, markup_cap_bps), platform_share_bps = coalesce($3, platform_share_bps),
       markup_bps = LEAST(markup_bps, coalesce($2, markup_cap_bps)), updated_at = now()
     WHERE merchant_id = $1 RETURNING *`,
    [agentId, terms.markupCapBps ?? null, terms.platformShareBps ?? null],
  );
  if (!rows[0]) throw new NotFound(NOT_AN_AGENT);
  return toAgent(rows[0]);
}

/**
 * The agent's own settings (PATCH /v1/agent, the dashboard): its markup within the operator's cap, and its payout
 * address (bodies.ts updateAgentBody). Payments already created keep the markup they were created with.
 */
export async function updateAgent(db: Db, agentId: string, body: unknown): Promise<Agent> {
  const agent = await requireAgent(db.pool, agentId);
  const parsed = updateAgentBody.safeParse(body === undefined ? {} : body);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error.issues, UPDATE_ORDER);
    throw new Invalid(issue.path[0] === "markupBps" ? MARKUP_MESSAGE(agent.markupCapBps) : issue.message);
  }
  const { markupBps, payoutAddress } = parsed.data;
  if (markupBps !== undefined && markupBps > agent.markupCapBps) throw new Invalid(MARKUP_MESSAGE(agent.markupCapBps));
  const { rows } = await db.pool.query<AgentRow>(
    `UPDATE agents SET markup_bps = coalesce($2, markup_bps), payout_address = coalesce($3, payout_address), updated_at = now()
     WHERE merchant_id = $1 AND coalesce($2, markup_bps) <= markup_cap_bps RETURNING *`,
    [agentId, markupBps ?? null, payoutAddress ?? null],
  );
  // The cap was lowered between the read and the write.
  if (!rows[0]) throw new Invalid(MARKUP_MESSAGE(agent.markupCapBps));
  return toAgent(rows[0]);
}
