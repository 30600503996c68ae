import type pg from "pg";
import { formatAmount } from "../../core/money.js";
import { bridgeRefOf, type BridgeRef } from "../bridge/index.js";
import type { PaymentWebhookEvent } from "../webhooks/index.js";
import { waitingConfirmations } from "./confirmations.js";
import type { PaymentRow } from "./types.js";
import type { UnexpectedFunds } from "./unexpected-funds.js";

export const fmt = (units: string | bigint | null | undefined, decimals: number) => formatAmount(BigInt(units ?? 0), decimals);
const ms = (d: Date | null) => (d ? d.getTime() : null);

/** Every fee the merchant is charged, in the payment's token: platform, agent markup, gas and processing. */
export function totalFeeUnits(p: PaymentRow): bigint {
  return BigInt(p.platform_fee_units) + BigInt(p.agent_fee_units) + BigInt(p.gas_fee_units) + BigInt(p.processing_fee_units);
}

/**
 * The spec's `fees` object plus the extension `agentFee`: the referring agent's markup (docs/agents.md; "0" without an
 * agent or under the promotion). `totalFee` is the sum of all four, what the merchant is charged.
 */
export function feesOf(p: PaymentRow) {
  const d = p.token_decimals;
  return {
    platformFee: fmt(p.platform_fee_units, d),
    gasFee: fmt(p.gas_fee_units, d),
    processingFee: fmt(p.processing_fee_units, d),
    totalFee: fmt(totalFeeUnits(p), d),
    feePercentage: p.promo_applied ? 0 : p.platform_fee_bps / 100,
    agentFee: fmt(p.agent_fee_units, d),
  };
}

export type TerminalRef = { terminalId: string; code: string; name: string } | null;

export async function terminalOf(db: Pick<pg.Pool, "query">, p: PaymentRow): Promise<TerminalRef> {
  if (!p.terminal_id) return null;
  const { rows } = await db.query(`SELECT id, code, name FROM terminals WHERE id = $1 AND deleted_at IS NULL`, [p.terminal_id]);
  return rows[0] ? { terminalId: rows[0].id, code: rows[0].code, name: rows[0].name } : null;
}

/**
 * The list output of GET /v1/payments (chainId as string, token object, transaction, fees), plus the
 * extension `unexpectedFunds` (modules/payments/unexpected-funds.ts; an empty array when none) and the extension
 * `bridge`: the cross-chain order the payer placed, or null (modules/bridge/refs.ts; docs/bridge.md).
 *
 * `transaction` is the first deposit (`hash`, `blockNumber`), as the spec has it, in every status. Its
 * `confirmations`:
 * - `waiting_for_confirmation`: the payer page's count (confirmations.ts waitingConfirmations): the depth of the block
 *   that completed the full amount (with instalments, a later one than `blockNumber`) at `indexedBlock`, the indexer's
 *   block on the chain (confirmations.ts indexedBlocks), between 1 and `blockConfirmations`; 1 without `indexedBlock`.
 *   The dashboard shows this number as it is;
 * - any other status: `latestBlock` (the node's head) - `blockNumber` + 1, 0 without it. Once paid this is at least
 *   `blockConfirmations` (the head is at or past the block the detector counted at), so the number does not go down
 *   when a waiting payment is paid.
 */
export function paymentListItem(
  p: PaymentRow,
  extra: {
    terminal: TerminalRef;
    latestBlock?: bigint;
    indexedBlock?: bigint;
    unexpectedFunds?: UnexpectedFunds[];
    bridge?: BridgeRef;
  },
) {
  const d = p.token_decimals;
  const blockNumber = p.payment_block_number ? Number(p.payment_block_number) : null;
  const confirmations =
    p.status === "waiting_for_confirmation"
      ? waitingConfirmations(p, extra.indexedBlock)
      : extra.latestBlock !== undefined && blockNumber !== null
        ? Math.max(0, Number(extra.latestBlock) - blockNumber + 1)
        : 0;
  return {
    paymentId: p.id,
    orderId: p.order_id,
    description: p.description,
    status: p.status,
    createdAt: ms(p.created_at),
    completedAt: ms(p.completed_at),
    expiresAt: ms(p.expires_at),
    chainId: String(p.chain_id),
    token: { address: p.token_address, symbol: p.token_symbol, decimals: d },
    amount: fmt(p.amount_units, d),
    receivedAmount: fmt(p.received_units, d),
    merchant: p.merchant_address,
    recipientAddress: p.recipient_address,
    transaction: p.payment_tx_hash ? { hash: p.payment_tx_hash, blockNumber, confirmations } : null,
    settlementTransactionHash: p.settlement_tx_hash,
    fees: feesOf(p),
    gasless: p.gasless,
    payerCoversFee: p.payer_covers_fee,
    blockConfirmations: p.block_confirmations,
    terminal: extra.terminal,
    priceSource: p.price_source,
    unexpectedFunds: extra.unexpectedFunds ?? [],
    bridge: extra.bridge ?? null,
  };
}

/** Webhook body: the spec's common fields plus the optional fields that apply. */
export async function paymentWebhookPayload(
  db: Pick<pg.Pool, "query">,
  p: PaymentRow,
  event: PaymentWebhookEvent,
  now: number,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const d = p.token_decimals;
  const body: Record<string, unknown> = {
    event,
    paymentId: p.id,
    orderId: p.order_id,
    merchant: p.merchant_address,
    recipientAddress: p.recipient_address,
    amount: fmt(p.amount_units, d),
    token: p.token_address,
    chainId: p.chain_id,
    status: p.status,
    timestamp: now,
  };
  if (p.description) body.description = p.description;
  if (BigInt(p.received_units) > 0n) body.receivedAmount = fmt(p.received_units, d);
  if (BigInt(p.overpayment_units) > 0n) body.overpayment = fmt(p.overpayment_units, d);
  // Extension, beside the spec's `overpayment` and like it only when there is one: the shortfall of a payment accepted
  // under the merchant's underpayment tolerance (docs/payments.md "Underpayment tolerance").
  if (BigInt(p.underpayment_units) > 0n) body.underpayment = fmt(p.underpayment_units, d);
  if (p.block_confirmations > 1) body.blockConfirmations = p.block_confirmations;
  if (event === "payment.completed" && p.settlement_tx_hash) body.transactionHash = p.settlement_tx_hash;
  if (event === "payment.withdrawn" && p.withdrawn_units) {
    body.amountWithdrawn = fmt(p.withdrawn_units, d);
    body.withdrawalTransactionHash = p.withdrawal_tx_hash;
  }
  body.terminal = await terminalOf(db, p);
  body.bridge = await bridgeRefOf(db, p.id);
  return { ...body, ...extra };
}

/**
 * A payment webhook's body with its `bridge` block as the order stands now, or null when it has none or it did not
 * change: `payment.completed` is written when the funds arrive, often before the bridge poll has seen the order
 * fulfilled, so the block is brought up to date before the first attempt (the dispatcher's `refreshBody`).
 * @example await refreshedPaymentWebhookBody(pool, { kind: "payment", event: "payment.completed", body }) // '{…"bridge":{…"status":"claimed_unlock"}}'
 */
export async function refreshedPaymentWebhookBody(
  db: Pick<pg.Pool, "query">,
  d: { kind: string; event: string; body: string },
): Promise<string | null> {
  if (d.kind !== "payment" || !d.body.includes('"bridge":{')) return null;
  const body = JSON.parse(d.body) as Record<string, unknown>;
  if (!body.bridge || typeof body.paymentId !== "string") return null;
  const fresh = JSON.stringify({ ...body, bridge: await bridgeRefOf(db, body.paymentId) });
  return fresh === d.body ? null : fresh;
}
