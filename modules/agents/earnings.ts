import type pg from "pg";
import { zeroAddress } from "viem";
import { formatAmount, mulDivFloor, parsePrice18, unitsToUsd18Ceil } from "../../core/money.js";

/** What earnings are computed from: a completed payment's row (modules/payments, PaymentRow). */
export type EarningPayment = {
  id: string;
  agent_id: string | null;
  agent_fee_units: string;
  agent_share_bps: number;
  platform_fee_units: string;
  gasless: boolean;
  payer_covers_fee: boolean;
  chain_id: number;
  token_address: string;
  token_symbol: string;
  token_decimals: number;
  price_usd: string | null;
  price_source: string;
};

/** The ledger currency of Gas Tank payments' fees: USD in USDT micros (6 decimals), chain-less (`chain_id` 0). */
export const USD_CURRENCY = "usd";
const USD_DECIMALS = 6;
const BPS = 10_000n;
const MICROS_PER_USD18 = 10n ** 12n;

type Movement = { kind: "markup" | "platform_share"; chainId: number; currency: string; decimals: number; symbol: string; units: bigint };

/**
 * What a completed payment earns its agent (docs/agents.md): its markup, and `agent_share_bps` of its platform fee
 * rounded down. In the payment's token where the fees were taken from the payment (gasless, payer-covers-fee); in USD
 * micros where they were charged to the Gas Tank, each at its USD value as the Gas Tank was charged, rounded down
 * (nothing for a payment priced by the merchant's `customPriceUsd`).
 */
export function earningsOf(p: EarningPayment): Movement[] {
  if (!p.agent_id) return [];
  const markup = BigInt(p.agent_fee_units);
  const share = mulDivFloor(BigInt(p.platform_fee_units), BigInt(p.agent_share_bps), BPS);
  const gasTank = !p.gasless && !p.payer_covers_fee;
  const out: Movement[] = [];
  const add = (kind: Movement["kind"], units: bigint) => {
    if (!gasTank) {
      const currency = p.token_address.toLowerCase() === zeroAddress ? zeroAddress : p.token_address.toLowerCase();
      if (units > 0n) out.push({ kind, chainId: p.chain_id, currency, decimals: p.token_decimals, symbol: p.token_symbol, units });
      return;
    }
    // A merchant-supplied price would let a merchant and its agent turn Gas Tank credit into withdrawable USD.
    if (!p.price_usd || p.price_source === "custom") return;
    const usd18 = unitsToUsd18Ceil(units, p.token_decimals, parsePrice18(p.price_usd));
    const micros = usd18 / MICROS_PER_USD18;
    if (micros > 0n) out.push({ kind, chainId: 0, currency: USD_CURRENCY, decimals: USD_DECIMALS, symbol: "USD", units: micros });
  };
  add("markup", markup);
  // The share of a Gas Tank payment's platform fee: of its USD value, so the rounding matches what the tank paid.
  if (gasTank && p.price_usd && p.price_source !== "custom") {
    const platformUsd18 = unitsToUsd18Ceil(BigInt(p.platform_fee_units), p.token_decimals, parsePrice18(p.price_usd));
    const micros = mulDivFloor(platformUsd18, BigInt(p.agent_share_bps), BPS) / MICROS_PER_USD18;
    if (micros > 0n)
      out.push({ kind: "platform_share", chainId: 0, currency: USD_CURRENCY, decimals: USD_DECIMALS, symbol: "USD", units: micros });
  } else if (!gasTank) add("platform_share", share);
  return out;
}

/**
 * Records a completed payment's earnings for its agent, in the transaction that completes it; repeating it records
 * nothing more (one row per payment and kind).
 */
export async function accrueAgentEarnings(client: pg.PoolClient, p: EarningPayment, now: number): Promise<void> {
  for (const m of earningsOf(p))
    await client.query(
      `INSERT INTO agent_earnings (agent_id, kind, payment_id, chain_id, currency, decimals, symbol, units, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (payment_id, kind) WHERE payment_id IS NOT NULL DO NOTHING`,
      [p.agent_id, m.kind, p.id, m.chainId, m.currency, m.decimals, m.symbol, m.units.toString(), new Date(now)],
    );
}

export type AgentBalance = {
  /** Chain id as a string (the API's convention); "0" for the USD balance. */
  chainId: string;
  /** Token address (the zero address: the native coin), or `usd`. */
  currency: string;
  symbol: string;
  decimals: number;
  markup: string;
  platformShare: string;
  withdrawn: string;
  available: string;
};

/** Earned, withdrawn and available, per chain and currency (decimal strings, exact). */
export async function agentBalances(db: Pick<pg.Pool, "query">, agentId: string): Promise<AgentBalance[]> {
  const { rows } = await db.query<{
    chain_id: number;
    currency: string;
    symbol: string;
    decimals: number;
    markup: string;
    share: string;
    withdrawn: string;
    total: string;
  }>(
    `SELECT chain_id, currency, max(symbol) AS symbol, max(decimals) AS decimals,
            coalesce(sum(units) FILTER (WHERE kind = 'markup'), 0)::text AS markup,
            coalesce(sum(units) FILTER (WHERE kind = 'platform_share'), 0)::text AS share,
            coalesce(-sum(units) FILTER (WHERE kind IN ('withdrawal', 'withdrawal_refund')), 0)::text AS withdrawn,
            sum(units)::text AS total
       FROM agent_earnings WHERE agent_id = $1 GROUP BY chain_id, currency ORDER BY chain_id, currency`,
    [agentId],
  );
  return rows.map((r) => ({
    chainId: String(r.chain_id),
    currency: r.currency,
    symbol: r.symbol,
    decimals: r.decimals,
    markup: formatAmount(BigInt(r.markup), r.decimals),
    platformShare: formatAmount(BigInt(r.share), r.decimals),
    withdrawn: formatAmount(BigInt(r.withdrawn), r.decimals),
    available: formatAmount(BigInt(r.total), r.decimals),
  }));
}

export type ReferredMerchant = {
  merchantId: string;
  name: string;
  merchantType: string;
  createdAt: number;
  completedPayments: number;
  /** Completed volume per chain and token (requested amounts), decimal strings. */
  volume: { chainId: string; token: string; symbol: string; amount: string }[];
  /** What the merchant's payments earned the agent, per chain and currency (markup and share together). */
  earnings: { chainId: string; currency: string; symbol: string; amount: string }[];
};

/** The merchants an agent referred, with their completed payments and volume since (only the agent's own). */
export async function referredMerchants(db: Pick<pg.Pool, "query">, agentId: string): Promise<ReferredMerchant[]> {
  const { rows: merchants } = await db.query<{ id: string; name: string; merchant_type: string; created_at: Date }>(
    `SELECT id, name, merchant_type, created_at FROM merchants WHERE agent_id = $1 ORDER BY created_at, id`,
    [agentId],
  );
  const { rows: volume } = await db.query<{
    merchant_id: string;
    chain_id: number;
    token_address: string;
    token_symbol: string;
    token_decimals: number;
    n: number;
    units: string;
  }>(
    `SELECT merchant_id, chain_id, token_address, token_symbol, token_decimals, count(*)::int AS n, sum(amount_units)::text AS units
       FROM payments WHERE agent_id = $1 AND status = 'completed'
      GROUP BY merchant_id, chain_id, token_address, token_symbol, token_decimals ORDER BY chain_id, token_symbol`,
    [agentId],
  );
  const { rows: earned } = await db.query<{
    merchant_id: string;
    chain_id: number;
    currency: string;
    symbol: string;
    decimals: number;
    units: string;
  }>(
    `SELECT p.merchant_id, e.chain_id, e.currency, max(e.symbol) AS symbol, max(e.decimals) AS decimals, sum(e.units)::text AS units
       FROM agent_earnings e JOIN payments p ON p.id = e.payment_id
      WHERE e.agent_id = $1 AND e.kind IN ('markup', 'platform_share')
      GROUP BY p.merchant_id, e.chain_id, e.currency ORDER BY e.chain_id, e.currency`,
    [agentId],
  );
  return merchants.map((m) => {
    const mine = volume.filter((v) => v.merchant_id === m.id);
    return {
      merchantId: m.id,
      name: m.name,
      merchantType: m.merchant_type,
      createdAt: m.created_at.getTime(),
      completedPayments: mine.reduce((n, v) => n + v.n, 0),
      volume: mine.map((v) => ({
        chainId: String(v.chain_id),
        token: v.token_address,
        symbol: v.token_symbol,
        amount: formatAmount(BigInt(v.units), v.token_decimals),
      })),
      earnings: earned
        .filter((e) => e.merchant_id === m.id)
        .map((e) => ({
          chainId: String(e.chain_id),
          currency: e.currency,
          symbol: e.symbol,
          amount: formatAmount(BigInt(e.units), e.decimals),
        })),
    };
  });
}
