import type { AppDeps } from "../../core/deps.js";
import { formatAmount } from "../../core/money.js";
import { authenticate, type Caller } from "../merchants/index.js";
import { listDeliveries, type DeliveryView } from "../webhooks/index.js";
import { bridgeRefOf } from "../bridge/index.js";
import { indexedBlocks } from "./confirmations.js";
import { cancelRefusal } from "./cancel.js";
import { fmt, paymentListItem, terminalOf } from "./serialize.js";
import { isPartialPayment } from "./tolerance.js";
import { unexpectedFundsOf } from "./unexpected-funds.js";
import type { FundsScreening } from "./funds-screening.js";
import { merchantPayment } from "./merchant-payment.js";
import { redirectHash, redirectTarget } from "./verify-hash.js";

// One payment with everything the merchant may want to see of it (the dashboard's payment screen): the list
// fields, the audit trail of its states, its transactions, fees, the redirect hash, its webhook deliveries and
// unexpected funds. Scoped to the caller's merchant: another merchant's payment is NotFound.

export type TimelineEntry = { at: number; from: string | null; to: string; reason: string | null };

export type PaymentTransaction = {
  /** `payment`: the payer's transfer; `settlement` / `withdrawal`: our sweep to the merchant (any attempt). */
  kind: "payment" | "settlement" | "withdrawal";
  hash: string;
  blockNumber: number | null;
  /** The payer's transfer only. */
  confirmations: number | null;
  /** Sweeps: signed | sent | mined | reverted | dropped; null for the payer's transfer. */
  status: string | null;
  /** The sweep the payment's status refers to (settlement_tx_hash / withdrawal_tx_hash). */
  final: boolean;
};

export type PaymentDetail = {
  payment: ReturnType<typeof paymentListItem>;
  /** What the payer must send (the amount, plus fees in payer-covers-fee mode). */
  dueAmount: string;
  overpayment: string;
  /** The shortfall of a payment accepted under the merchant's underpayment tolerance ("0" when none). */
  underpayment: string;
  withdrawnAmount: string | null;
  failureReason: string | null;
  priceUsd: string | null;
  /** Fees charged to the Gas Tank (Gas Tank mode), USDT with 6 decimals; null when none. */
  gasTankFee: string | null;
  promoApplied: boolean;
  timeline: TimelineEntry[];
  transactions: PaymentTransaction[];
  /** `hash` is what the redirect appends and GET /payments/verify accepts; `url` only when a redirectUrl was given. */
  redirect: { url: string | null; hash: string };
  deliveries: DeliveryView[];
  /** A partial payment the merchant may withdraw now (modules/payments/withdraw.ts). */
  canWithdraw: boolean;
  /**
   * A pending payment the merchant may cancel now (modules/payments/cancel.ts cancelRefusal): nothing counted, nothing
   * at its address, no cross-chain order in flight. Read without the lock; the cancel checks again under it.
   */
  canCancel: boolean;
};

type Deps = Pick<AppDeps, "db" | "now" | "config" | "chains" | "clients">;

const WITHDRAWABLE = ["pending", "expired"];

/**
 * The detail of one of the caller's payments. Throws Unauthorized, or NotFound (`Payment not found`) for a
 * malformed, unknown or another merchant's id.
 *
 * @example
 * const d = await paymentDetail(deps, { merchantId }, paymentId);
 * d.timeline; // [{ to: "pending", reason: "created", … }, { from: "pending", to: "paid", … }]
 */
export async function paymentDetail(deps: Deps, caller: Caller, paymentId: string, screening: FundsScreening): Promise<PaymentDetail> {
  const merchant = await authenticate(deps, caller);
  const p = await merchantPayment(deps.db.pool, merchant.id, paymentId);

  const client = deps.clients.get(p.chain_id);
  const [terminal, latestBlock, unexpected, events, sweeps, deliveries, bridge, cancelBlocked, indexed] = await Promise.all([
    terminalOf(deps.db.pool, p),
    p.payment_block_number && client ? client.getBlockNumber().catch(() => undefined) : undefined,
    unexpectedFundsOf(deps, [p], screening),
    deps.db.pool.query<{ from_status: string | null; to_status: string; reason: string | null; created_at: Date }>(
      `SELECT from_status, to_status, reason, created_at FROM payment_events WHERE payment_id = $1 ORDER BY id`,
      [p.id],
    ),
    deps.db.pool.query<{ tx_hash: string; status: string; block_number: string | null }>(
      `SELECT tx_hash, status, block_number FROM settlements WHERE payment_ids @> ARRAY[$1]::uuid[] ORDER BY created_at, id`,
      [p.id],
    ),
    listDeliveries(deps.db, { merchantId: merchant.id, kind: "payment" }, { paymentId: p.id, limit: "100" }),
    bridgeRefOf(deps.db.pool, p.id),
    // An unreadable native balance hides the button (the cancel itself would fail the same way).
    cancelRefusal(deps, deps.db.pool, p).catch(() => "unknown"),
    // A waiting payment's confirmations count against the indexer's block, as in the list and on the payer page.
    indexedBlocks(deps.db, [p]),
  ]);
  const payment = paymentListItem(p, {
    terminal,
    latestBlock,
    unexpectedFunds: unexpected.get(p.id),
    bridge,
    indexedBlock: indexed.get(p.chain_id),
  });

  const timeline: TimelineEntry[] = [
    { at: p.created_at.getTime(), from: null, to: "pending", reason: "created" },
    ...events.rows.map((e) => ({ at: e.created_at.getTime(), from: e.from_status, to: e.to_status, reason: e.reason })),
  ];

  const transactions: PaymentTransaction[] = [];
  if (payment.transaction) transactions.push({ kind: "payment", ...payment.transaction, status: null, final: true });
  const isWithdrawal = ["withdraw_request", "withdrawing", "withdrawn"].includes(p.status) || p.withdrawal_tx_hash !== null;
  for (const s of sweeps.rows)
    transactions.push({
      kind: isWithdrawal ? "withdrawal" : "settlement",
      hash: s.tx_hash,
      blockNumber: s.block_number ? Number(s.block_number) : null,
      confirmations: null,
      status: s.status,
      final: s.tx_hash === p.settlement_tx_hash || s.tx_hash === p.withdrawal_tx_hash,
    });
  // Final hashes recorded without a sweep row of ours (older data) still show.
  for (const [kind, hash] of [
    ["settlement", p.settlement_tx_hash],
    ["withdrawal", p.withdrawal_tx_hash],
  ] as const)
    if (hash && !sweeps.rows.some((s) => s.tx_hash === hash))
      transactions.push({ kind, hash, blockNumber: null, confirmations: null, status: null, final: true });

  let url: string | null = null;
  try {
    url = redirectTarget(deps.config.HASH_SECRET, p);
  } catch {
    url = null; // an unparsable stored URL: the hash alone is still shown
  }

  const received = BigInt(p.received_units);
  const gasTank = BigInt(p.gas_tank_fee_micros);
  return {
    payment,
    dueAmount: fmt(p.due_units, p.token_decimals),
    overpayment: fmt(p.overpayment_units, p.token_decimals),
    underpayment: fmt(p.underpayment_units, p.token_decimals),
    withdrawnAmount: p.withdrawn_units === null ? null : fmt(p.withdrawn_units, p.token_decimals),
    failureReason: p.failure_reason,
    priceUsd: p.price_usd,
    gasTankFee: gasTank > 0n ? formatAmount(gasTank, 6) : null,
    promoApplied: p.promo_applied,
    timeline,
    transactions,
    redirect: { url, hash: redirectHash(deps.config.HASH_SECRET, p) },
    deliveries: deliveries.deliveries,
    // The rule of withdraw.ts: a payment received within its underpayment tolerance is not partial (tolerance.ts).
    canWithdraw: WITHDRAWABLE.includes(p.status) && isPartialPayment(received, BigInt(p.due_units), BigInt(p.underpayment_tolerance_units)),
    canCancel: cancelBlocked === null,
  };
}
