import type pg from "pg";
import { getAddress, isAddressEqual, type Address } from "viem";
import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid, NotFound, Unavailable } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { formatAmount } from "../../core/money.js";
import { firstIssue } from "../../core/zod-issues.js";
import { withTransaction } from "../../db/client.js";
import { bridgeAuthority } from "./authority.js";
import { spendProviderRequest, type TakeToken } from "./budget.js";
import { bridgeOrderInFlight, ORDER_IN_FLIGHT } from "./guard.js";
import { BRIDGE_UNAVAILABLE, bridgeFromConfig } from "./dln.js";
import type { BridgeProvider, BridgeQuote, ProviderOrderStatus } from "./provider.js";
import { QuoteCache } from "./quote-cache.js";
import {
  isSolanaSignature,
  latestBlockhash,
  SOLANA_CHAIN_ID,
  SOLANA_OFF,
  solanaHoldings,
  type SolanaHoldings,
  withBlockhash,
} from "./solana.js";
import { isSolanaAddress } from "../../chains/solana.js";
import { ORDER_TRANSITIONS, transitionOrder, type BridgeOrderRow, type BridgeOrderStatus } from "./transition.js";

/**
 * The payment side of cross-chain payments (spec "States and transitions", cross-chain rows; docs/bridge.md):
 * - `startBridgePayment`: the payer page asks what paying from another chain or token costs; with the payer's
 *   address it gets the order transaction to sign, and the order is recorded as `quoted`.
 * - `reportBridgeTx`: the page reports the payer's transaction; the provider names the orders it created, ours
 *   become `created` and the payment's `expiresAt` moves 15 minutes later, in one database transaction.
 * The fill arrives at the payment's recipient address as an ordinary transfer, so detection and settlement are
 * unchanged. Following orders and the 5-minute auto-cancel: modules/bridge/poll.ts.
 */

/** Spec "Limits": cross-chain expiry extension. */
export const EXPIRY_EXTENSION_MS = 15 * 60 * 1000;

export const BRIDGE_OFF = "Cross-chain payments are not available";
const REQUIRED = "srcChainId and srcToken are required";
const NOT_AWAITING = "Payment is not awaiting payment";
export const ORDER_OF_ANOTHER = "Bridge order belongs to another payment";

type BridgeDeps = Pick<AppDeps, "db" | "config" | "now">;

/**
 * What an order placed does to its payment, which the payments module writes (flows/bridge-orders.ts hands it in):
 * a pending payment gets `byMs` more, in the transaction holding its row.
 */
export type PaymentExpiry = (client: pg.PoolClient, paymentId: string, byMs: number, now: number) => Promise<void>;
/** The deps of what may move an order out of `quoted`. */
export type OrderDeps = BridgeDeps & { extendPaymentExpiry: PaymentExpiry };

const INVALID_TOKEN = "Invalid source token address";
const INVALID_PAYER = "Invalid payer address";
const ADDRESS_RE = /^(0x[0-9a-fA-F]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})$/;
const EVM_RE = /^0x[0-9a-fA-F]{40}$/;

/** GET /api/payments/{paymentId}/bridge/quote `?srcChainId&srcToken[&payer]`. */
export const bridgeQuoteQuery = z.object({
  srcChainId: z
    .string({ error: REQUIRED })
    .trim()
    .min(1, REQUIRED)
    .regex(/^[0-9]{1,15}$/, "srcChainId must be a number")
    .transform(Number),
  // An EVM address, or for Solana (srcChainId 7565164) a base58 key: which one is checked against srcChainId after.
  srcToken: z.string({ error: REQUIRED }).trim().min(1, REQUIRED).regex(ADDRESS_RE, INVALID_TOKEN),
  payer: z.string().trim().regex(ADDRESS_RE, INVALID_PAYER).optional(),
});

/** POST /api/payments/{paymentId}/bridge/orders `{txHash}`: an EVM transaction hash, or a Solana signature (base58, 64 bytes). */
export const bridgeOrderBody = z.object(
  {
    txHash: z
      .string({ error: "txHash is required" })
      .refine((v) => /^0x[0-9a-fA-F]{64}$/.test(v) || isSolanaSignature(v), "Invalid transaction hash"),
  },
  { error: "txHash is required" },
);

export type BridgeStart = { srcChainId: number; srcToken: string; payer?: string };

/**
 * The query of the quote route, checked: a missing parameter first, then each in order.
 * @example readBridgeQuoteQuery({ srcChainId: "137", srcToken: "0x3c49…3359" }) // { srcChainId: 137, srcToken: "0x3c49…3359" }
 */
export function readBridgeQuoteQuery(q: Record<string, string | undefined>): BridgeStart {
  const parsed = bridgeQuoteQuery.safeParse(q);
  if (parsed.success) {
    // Solana's tokens and payers are base58 keys, every other source's are EVM addresses.
    const ok = parsed.data.srcChainId === SOLANA_CHAIN_ID ? isSolanaAddress : (v: string) => EVM_RE.test(v);
    if (!ok(parsed.data.srcToken)) throw new Invalid(INVALID_TOKEN);
    if (parsed.data.payer !== undefined && !ok(parsed.data.payer)) throw new Invalid(INVALID_PAYER);
    return parsed.data;
  }
  const issues = parsed.error.issues;
  throw new Invalid((issues.find((i) => i.message === REQUIRED) ?? firstIssue(issues, Object.keys(bridgeQuoteQuery.shape))).message);
}

/**
 * The body of the report route, checked (the hash lowercased).
 * @example readBridgeOrderBody({ txHash: "0x5C50…9E1F" }) // { txHash: "0x5c50…9e1f" }
 */
export function readBridgeOrderBody(body: unknown): { txHash: string } {
  const parsed = bridgeOrderBody.safeParse(body);
  // A Solana signature is base58: its case is part of it.
  if (parsed.success) return { txHash: parsed.data.txHash.startsWith("0x") ? parsed.data.txHash.toLowerCase() : parsed.data.txHash };
  throw new Invalid(firstIssue(parsed.error.issues, ["txHash"]).message);
}

/** The configured provider and authority, or Unavailable `Cross-chain payments are not available`. */
function bridgeOf(deps: BridgeDeps): { bridge: BridgeProvider; authority: Address } {
  const bridge = bridgeFromConfig(deps.config);
  const authority = bridgeAuthority(deps.config);
  if (!bridge || !authority) throw new Unavailable(BRIDGE_OFF);
  return { bridge, authority: authority.address };
}

/** The columns of a payment row (modules/payments) a bridge order reads. */
type PaymentRow = {
  id: string;
  status: string;
  chain_id: number;
  token_address: string;
  recipient_address: string;
  due_units: string;
  received_units: string;
  expires_at: Date;
};

async function paymentOf(deps: BridgeDeps, paymentId: string): Promise<PaymentRow> {
  if (!isUuid(paymentId)) throw new NotFound("Payment not found");
  const { rows } = await deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [paymentId]);
  if (!rows[0]) throw new NotFound("Payment not found");
  return rows[0];
}

const side = (t: BridgeQuote["dstToken"]) => ({
  address: t.address,
  symbol: t.symbol,
  decimals: t.decimals,
  amount: formatAmount(t.amount, t.decimals),
  units: t.amount.toString(),
});

/** What the payer page shows and signs. Amounts: `amount` decimal, `units` smallest units. */
export type BridgeQuoteView = ReturnType<typeof quoteView>;

function quoteView(p: PaymentRow, q: BridgeQuote, ageMs: number) {
  return {
    paymentId: p.id,
    orderId: q.orderId,
    srcChainId: q.srcToken.chainId,
    srcToken: { ...side(q.srcToken), operatingExpenseUnits: q.srcToken.operatingExpense?.toString() ?? null },
    dstChainId: q.dstToken.chainId,
    dstToken: side(q.dstToken),
    /**
     * What the payer gets back if the order is cancelled (DLN's srcChainTokenOut): the input, or for a pre-swapped input
     * the reserve asset it is swapped to first (`preSwap`); the creation fee (`fixFee`) is refunded too.
     */
    refund: side(q.refundToken),
    preSwap: q.preSwap,
    /** Flat protocol fee in the source chain's native coin (wei), included in `tx.value`. */
    fixFee: q.fixFee.toString(),
    estimatedFulfillmentSeconds: q.estimatedFulfillmentSeconds,
    tx: !q.tx
      ? null
      : q.tx.kind === "solana"
        ? { kind: "solana" as const, data: q.tx.data }
        : {
            kind: "evm" as const,
            to: q.tx.to,
            data: q.tx.data,
            value: q.tx.value.toString(),
            allowanceTarget: q.tx.allowanceTarget,
            allowanceValue: q.tx.allowanceValue?.toString() ?? null,
          },
    expiresAt: p.expires_at.getTime(),
    /** How old the quote is (ms): a repeated question is answered from the cache (quote-cache.ts) for 15 s. */
    quoteAgeMs: ageMs,
  };
}

/** Provider quotes by payment, source, amount and payer (quote-cache.ts). */
const quotes = new QuoteCache<BridgeQuote>();

/**
 * A quote for paying what the payment still needs (amount due minus received, exactly) from another chain and token:
 * with `payer`, also the order transaction (the payer is sender, source authority and refund address; the service's
 * authority may cancel on the destination) and the order recorded as `quoted`. The payment must be pending, not
 * expired, and without an order in flight. The same question within 15 s is answered from the cache; a question the
 * provider must answer spends the payment's and the service's provider budget (`take`, budget.ts).
 * Throws NotFound, Conflict, Invalid (a provider refusal), RateLimited (the payment's share), Unavailable.
 * @example
 * const q = await startBridgePayment(deps, paymentId, { srcChainId: 137, srcToken: usdc137, payer }, take);
 * // q.srcToken.units: what to approve for q.tx.allowanceTarget ?? q.tx.to; then send q.tx
 */
export async function startBridgePayment(
  deps: BridgeDeps,
  paymentId: string,
  input: BridgeStart,
  take: TakeToken,
): Promise<BridgeQuoteView> {
  const p = await paymentOf(deps, paymentId);
  const { bridge, authority } = bridgeOf(deps);
  if (p.status !== "pending") throw new Conflict(NOT_AWAITING);
  if (p.expires_at.getTime() <= deps.now()) throw new Conflict("Payment has expired");
  if (input.srcChainId === p.chain_id) throw new Invalid("Source and destination networks must differ", "bridge_same_chain");
  const remaining = BigInt(p.due_units) - BigInt(p.received_units);
  if (remaining <= 0n) throw new Conflict(NOT_AWAITING);
  // What an order in flight will deliver is not received yet: a second order for the same rest would overpay.
  if (await bridgeOrderInFlight(deps.db.pool, p.id)) throw new Conflict(ORDER_IN_FLIGHT);

  const req = {
    srcChainId: input.srcChainId,
    srcToken: input.srcToken,
    dstChainId: p.chain_id,
    dstToken: p.token_address,
    dstAmount: remaining,
  };
  const solana = req.srcChainId === SOLANA_CHAIN_ID;
  if (solana && !deps.config.SOLANA_RPC_URL) throw new Unavailable(SOLANA_OFF);
  const payer = !input.payer ? undefined : solana ? input.payer : getAddress(input.payer);
  // What is still due is part of the key: a partial payment meanwhile asks anew.
  const key = [p.id, req.srcChainId, solana ? req.srcToken : req.srcToken.toLowerCase(), remaining, payer ?? ""].join(":");
  const { value: q, at } = await quotes.get(key, deps.now(), async () => {
    await spendProviderRequest(take, deps.config, "create-tx", p.id);
    if (!payer) return checked(await bridge.quote(req), req);
    return checked(await bridge.createOrderTx({ ...req, recipient: p.recipient_address, payer, dstAuthority: authority }), req);
  });
  const ageMs = Math.max(0, deps.now() - at);
  if (!payer) return quoteView(p, q, ageMs);
  // DLN's Solana transaction carries a blockhash that is old by the time the payer signs: every answer gets the latest.
  const fresh = q.tx?.kind === "solana" ? { ...q, tx: { ...q.tx, data: withBlockhash(q.tx.data, await latestBlockhash(deps.config)) } } : q;
  const now = new Date(deps.now());
  // An id the provider already gave another payment is refused: the row (and its order) stays theirs.
  const { rows: saved } = await deps.db.pool.query<{ payment_id: string }>(
    `INSERT INTO bridge_orders (id, payment_id, src_chain_id, src_token, src_amount, payer, dst_chain_id, dst_token, take_amount,
                                refund_token, refund_symbol, refund_decimals, refund_units, refund_fee_units, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $11, $12, $13, $14, $15, 'quoted', $10, $10)
     ON CONFLICT (id) DO UPDATE SET payment_id = bridge_orders.payment_id RETURNING payment_id`,
    [
      q.orderId,
      p.id,
      req.srcChainId,
      solana ? q.srcToken.address : getAddress(q.srcToken.address),
      q.srcToken.amount.toString(),
      payer,
      p.chain_id,
      p.token_address,
      remaining.toString(),
      now,
      q.refundToken.address,
      q.refundToken.symbol,
      q.refundToken.decimals,
      q.refundToken.amount.toString(),
      q.fixFee.toString(),
    ],
  );
  if (saved[0]?.payment_id !== p.id) throw new Conflict(ORDER_OF_ANOTHER);
  return quoteView(p, fresh, ageMs);
}

/** The provider quoted what was asked (chains, tokens, the exact amount out), or Unavailable. */
function checked<Q extends BridgeQuote>(
  q: Q,
  req: { srcChainId: number; srcToken: string; dstChainId: number; dstToken: string; dstAmount: bigint },
): Q {
  // EVM addresses compare case-insensitively, base58 keys exactly.
  const same = (a: string, b: string) => (a.startsWith("0x") ? a.toLowerCase() === b.toLowerCase() : a === b);
  const ok =
    q.srcToken.chainId === req.srcChainId &&
    same(q.srcToken.address, req.srcToken) &&
    q.dstToken.chainId === req.dstChainId &&
    same(q.dstToken.address, req.dstToken) &&
    q.dstToken.amount === req.dstAmount;
  if (!ok) throw new Unavailable(BRIDGE_UNAVAILABLE);
  return q;
}

/**
 * A payment's order as the payer page follows it.
 * @example orderView(row).status // "fulfilled"
 */
export function orderView(o: BridgeOrderRow) {
  return {
    orderId: o.id,
    status: o.status,
    providerStatus: o.provider_status,
    srcChainId: o.src_chain_id,
    srcToken: o.src_token,
    srcUnits: o.src_amount,
    payer: o.payer,
    dstChainId: o.dst_chain_id,
    dstToken: o.dst_token,
    takeUnits: o.take_amount,
    createTxHash: o.create_tx_hash,
    cancelTxHash: o.cancel_tx_hash,
    reportedAt: o.reported_at?.getTime() ?? null,
    /** What a cancel returns on the source (token, exact units, the creation fee in native units) and to whom. */
    refund: refundOf(o),
  };
}

/** An order's refund as recorded from its quote (null for orders quoted before refunds were kept). */
export function refundOf(
  o: Pick<BridgeOrderRow, "refund_token" | "refund_symbol" | "refund_decimals" | "refund_units" | "refund_fee_units" | "refund_to">,
) {
  if (o.refund_token === null || o.refund_units === null || o.refund_decimals === null) return null;
  return {
    token: o.refund_token,
    symbol: o.refund_symbol ?? "",
    decimals: o.refund_decimals,
    units: o.refund_units,
    amount: formatAmount(BigInt(o.refund_units), o.refund_decimals),
    feeUnits: o.refund_fee_units ?? "0",
    to: o.refund_to,
  };
}
export type BridgeOrderView = ReturnType<typeof orderView>;

/**
 * The payer's transaction reported: the orders it created that were quoted for this payment become `created`, and
 * the payment (if pending) gets 15 more minutes, once per order (a repeated report changes nothing). The orders are
 * recorded whatever the payment's state, so an unfilled one is still cancelled and refunded.
 * Throws NotFound, Conflict `No bridge order found in this transaction yet` (the provider has not indexed it: retry),
 * Invalid `Transaction created no bridge order for this payment`, Unavailable (also when the service's provider budget
 * is spent: `take`, budget.ts).
 * @example
 * const r = await reportBridgeTx(deps, paymentId, "0x5c50…9e1f", take); // r.orders[0].status === "created"
 */
export async function reportBridgeTx(
  deps: OrderDeps,
  paymentId: string,
  txHash: string,
  take: TakeToken,
): Promise<{ paymentId: string; expiresAt: number; orders: BridgeOrderView[] }> {
  await paymentOf(deps, paymentId);
  const { bridge } = bridgeOf(deps);
  await spendProviderRequest(take, deps.config, "order-ids");
  let ids = await bridge.orderIdsOfTx(txHash);
  if (!ids.length && !txHash.startsWith("0x")) ids = await solanaOrderFallback(deps, bridge, paymentId);
  if (!ids.length) throw new Conflict("No bridge order found in this transaction yet");
  const { rows } = await deps.db.pool.query<BridgeOrderRow>(`SELECT * FROM bridge_orders WHERE id = ANY($1::text[]) AND payment_id = $2`, [
    ids.map((x) => x.toLowerCase()),
    paymentId,
  ]);
  if (!rows.length) throw new Invalid("Transaction created no bridge order for this payment");
  // The report only says the order was created: it moves orders still `quoted`, never one the poll has moved since.
  for (const o of rows) if (o.status === "quoted") await applyProviderStatus(deps, o, "Created", { txHash });
  return paymentOrders(deps, paymentId);
}

/** GET /api/payments/{paymentId}/bridge/holdings `?srcChainId=7565164&owner=<base58>`. */
export const bridgeHoldingsQuery = z.object({
  srcChainId: z.literal(String(SOLANA_CHAIN_ID), { error: `srcChainId must be ${SOLANA_CHAIN_ID}` }),
  owner: z.string({ error: "owner is required" }).refine(isSolanaAddress, "Invalid owner address"),
});

/**
 * A Solana payer's balances of the tokens the page offers (and SOL for fees), for an open payment: the wallet has no
 * read API and the RPC URL stays on the server. Throws NotFound, Invalid, Unavailable (no SOLANA_RPC_URL, RPC down).
 * @example (await bridgeHoldings(deps, paymentId, { srcChainId: "7565164", owner })).tokens[0].units // "25000000"
 */
export async function bridgeHoldings(
  deps: BridgeDeps,
  paymentId: string,
  query: Record<string, string | undefined>,
): Promise<SolanaHoldings> {
  const q = bridgeHoldingsQuery.safeParse(query);
  if (!q.success) throw new Invalid(firstIssue(q.error.issues, ["srcChainId", "owner"]).message);
  const p = await paymentOf(deps, paymentId);
  if (p.status !== "pending") throw new Conflict(NOT_AWAITING);
  return solanaHoldings(deps.config, q.data.owner);
}

/**
 * For a Solana signature DLN does not (yet) map to orders: the payment's latest quoted Solana order, if DLN knows it
 * as placed. deBridge documents order-ids by transaction hash; by Solana signature it is not documented, so the
 * order the payer was just given is asked about directly (one request more).
 */
async function solanaOrderFallback(deps: BridgeDeps, bridge: BridgeProvider, paymentId: string): Promise<string[]> {
  const { rows } = await deps.db.pool.query<{ id: string }>(
    `SELECT id FROM bridge_orders WHERE payment_id = $1 AND src_chain_id = $2 AND status = 'quoted' ORDER BY created_at DESC LIMIT 1`,
    [paymentId, SOLANA_CHAIN_ID],
  );
  if (!rows[0]) return [];
  return (await bridge.orderStatus(rows[0].id)) === "None" ? [] : [rows[0].id];
}

/**
 * The payment's orders the payer placed (not bare quotes), newest first, and its current `expiresAt`: what the payer page polls.
 * @example (await paymentOrders(deps, id)).orders[0]?.status // "fulfilled"
 */
export async function paymentOrders(
  deps: BridgeDeps,
  paymentId: string,
): Promise<{ paymentId: string; expiresAt: number; orders: BridgeOrderView[] }> {
  const p = await paymentOf(deps, paymentId);
  const { rows } = await deps.db.pool.query<BridgeOrderRow>(
    `SELECT * FROM bridge_orders WHERE payment_id = $1 AND status <> 'quoted' ORDER BY reported_at DESC NULLS LAST, created_at DESC`,
    [paymentId],
  );
  return { paymentId, expiresAt: p.expires_at.getTime(), orders: rows.map(orderView) };
}

/**
 * Our status for the provider's, from where the order stands; null: no move.
 * @example targetStatus({ status: "created" }, "SentUnlock") // "fulfilled"
 */
export function targetStatus(o: Pick<BridgeOrderRow, "status">, s: ProviderOrderStatus): BridgeOrderStatus | null {
  const to = ((): BridgeOrderStatus | null => {
    switch (s) {
      case "None":
        return null;
      case "Created":
        // A reverted cancel is handled where its receipt is read (poll.ts applyCancelOutcome).
        return o.status === "quoted" ? "created" : null;
      case "Fulfilled":
      case "SentUnlock":
        return "fulfilled";
      case "ClaimedUnlock":
        return "claimed_unlock";
      case "OrderCancelled":
      case "SentOrderCancel":
        return "cancel_sent";
      case "ClaimedOrderCancel":
        return "cancelled";
    }
  })();
  return to && to !== o.status && ORDER_TRANSITIONS[o.status].includes(to) ? to : null;
}

/**
 * Applies the provider's status to an order. An order leaving `quoted` (the payer's transaction was reported or
 * found) is stamped `reported_at` (the 5-minute window starts) and extends its pending payment by 15 minutes, in
 * the transaction that locks the payment row first (as the expiry job does), so the two never interleave.
 * @example await applyProviderStatus(deps, order, "ClaimedOrderCancel"); // cancel_sent -> cancelled, with its event row
 */
export async function applyProviderStatus(
  deps: OrderDeps,
  o: BridgeOrderRow,
  s: ProviderOrderStatus,
  opts: { txHash?: string; reason?: string } = {},
): Promise<BridgeOrderRow | null> {
  const to = targetStatus(o, s);
  const now = deps.now();
  if (!to) {
    if (s !== "None" && s !== o.provider_status)
      await deps.db.pool.query(`UPDATE bridge_orders SET provider_status = $2, updated_at = $3 WHERE id = $1`, [o.id, s, new Date(now)]);
    return null;
  }
  return withTransaction(deps.db, async (client) => {
    const set: Record<string, unknown> = { provider_status: s };
    if (o.status === "quoted") {
      const { rows } = await client.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1 FOR UPDATE`, [o.payment_id]);
      set.reported_at = new Date(now);
      if (opts.txHash) set.create_tx_hash = opts.txHash;
      const moved = await transitionOrder(client, o.id, { from: ["quoted"], to, reason: opts.reason ?? `payer's order ${s}`, set, now });
      if (moved && rows[0]?.status === "pending") await deps.extendPaymentExpiry(client, o.payment_id, EXPIRY_EXTENSION_MS, now);
      return moved;
    }
    return transitionOrder(client, o.id, { from: [o.status], to, reason: opts.reason ?? `provider: ${s}`, set, now });
  });
}

/**
 * Whether two addresses are the same account (case-insensitive; false for anything not an address).
 * @example sameAddress("0xabc…", "0xABC…") // true
 */
export function sameAddress(a: string, b: string): boolean {
  try {
    return isAddressEqual(a as Address, b as Address);
  } catch {
    return false;
  }
}
