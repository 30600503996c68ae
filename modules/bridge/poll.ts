import type pg from "pg";
import { BRIDGE_CANCEL_GAS_CAP } from "../../chains/gas-caps.js";
import { getAddress, type Hex } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, isDomainError } from "../../core/errors.js";
import { logger } from "../../core/log.js";
import { GasEstimateError, txSender, type TxOutcome } from "../../chains/tx-sender.js";
import { parsePrice18 } from "../../core/money.js";
import { withTransaction } from "../../db/client.js";
import { resolveNativePriceUsd } from "../pricing/index.js";
import { bridgeAuthority } from "./authority.js";
import { checkCancelTx } from "./cancel-check.js";
import { cancelValueRefusal, readMessagingFee } from "./cancel-fee.js";
import { bridgeFromConfig } from "./dln.js";
import { SOLANA_CHAIN_ID, solanaKeyHex } from "./solana.js";
import { applyProviderStatus, type PaymentExpiry } from "./orders.js";
import type { BridgeProvider } from "./provider.js";
import { LIVE, transitionOrder, type BridgeOrderRow } from "./transition.js";

/** Spec "Limits": an order still `Created` this long after it was placed is cancelled. */
export const AUTO_CANCEL_MS = 5 * 60 * 1000;
/** Unreported quotes are looked up at the provider while this young (a payer whose page closed before reporting)... */
const ADOPT_WINDOW_MS = 60 * 60 * 1000;
/** ...once this old (the page usually reports first), at most once a minute each. */
const ADOPT_AFTER_MS = 30_000;
const ADOPT_EVERY_MS = 60_000;
/** A refused, failed or reverted cancel is tried again this long after (each attempt asks the provider for cancel-tx). */
export const CANCEL_RETRY_MS = 60_000;
/** Orders handled per step and pass: a bounded pass, whatever the backlog (the next pass takes the rest). */
const BATCH = 100;
/**
 * How often a live order's status is asked, by the time since it was placed: every pass for 10 minutes (a fill
 * takes seconds to minutes), every 30 s until an hour, then every 5 minutes (a stuck claim or cancel).
 */
const POLL_BACKOFF_SQL = `CASE WHEN COALESCE(reported_at, created_at) > $2::timestamptz - interval '10 minutes' THEN interval '0'
  WHEN COALESCE(reported_at, created_at) > $2::timestamptz - interval '1 hour' THEN interval '30 seconds'
  ELSE interval '5 minutes' END`;

/**
 * Status requests one pass may make: BRIDGE_STATUS_REQUESTS_PER_MINUTE spread over the passes of a minute (DLN
 * allows 50 requests a minute without an access token, and quotes need their share). At least one.
 * @example statusBudget({ BRIDGE_STATUS_REQUESTS_PER_MINUTE: 40, BRIDGE_POLL_INTERVAL_MS: 5000 }) // 3
 */
export function statusBudget(config: Pick<AppDeps["config"], "BRIDGE_STATUS_REQUESTS_PER_MINUTE" | "BRIDGE_POLL_INTERVAL_MS">): number {
  return Math.max(1, Math.floor((config.BRIDGE_STATUS_REQUESTS_PER_MINUTE * config.BRIDGE_POLL_INTERVAL_MS) / 60_000));
}

const log = () => logger("bridge");

export type BridgePassStats = { adopted: number; moved: number; cancelsSent: number };

/**
 * One pass of the bridge-orders processor (processors/bridge-orders.ts), safe to repeat and to run beside replicas:
 * 1. reconcile our cancel transactions (chains/tx-sender.ts: mined, reverted, dropped -> cancel again);
 * 2. poll live orders' status and move them (Created -> Fulfilled -> ClaimedUnlock; SentOrderCancel -> ClaimedOrderCancel),
 *    young orders every pass, older ones less often (POLL_BACKOFF_SQL), within the pass's request budget;
 * 3. adopt: the latest unreported quote of each payment, if the payer sent it after all (the provider knows it);
 * 4. auto-cancel: an order still `created` 5 minutes after it was placed (deps.now()) gets the provider's cancel
 *    transaction, sent on the destination chain by the service's order authority; `cancel_sent` until the provider
 *    reports ClaimedOrderCancel (the escrow refunded to the payer on the source), then `cancelled`. The provider's
 *    cancel transaction is signed only if it is DLN's cancel of this very order, refunding the payer, on the chain's
 *    bridge destination (cancel-check.ts), carrying deBridge's messaging fee read on chain plus at most
 *    BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD (cancel-fee.ts); an error on one order is noted on it and the pass goes on.
 * Without BRIDGE_API_URL it does nothing.
 * @example await runBridgeOrders(deps); // { adopted: 0, moved: 1, cancelsSent: 0 }
 */
export async function runBridgeOrders(deps: AppDeps & { extendPaymentExpiry: PaymentExpiry }): Promise<BridgePassStats> {
  const stats: BridgePassStats = { adopted: 0, moved: 0, cancelsSent: 0 };
  const bridge = bridgeFromConfig(deps.config);
  if (!bridge) return stats;
  const authority = bridgeAuthority(deps.config);
  const budget = { left: statusBudget(deps.config) };
  // Live orders first (they hold payments), one request of the pass kept for unreported quotes (pollLive).
  if (authority) await reconcileCancels(deps, authority);
  stats.moved = await pollLive(deps, bridge, budget);
  stats.adopted = await adoptQuotes(deps, bridge, budget);
  if (authority) stats.cancelsSent = await autoCancel(deps, bridge, authority);
  return stats;
}

/** The provider's status, or null when it cannot be asked now (logged; the next pass asks again). */
async function statusOf(bridge: BridgeProvider, id: string) {
  try {
    return await bridge.orderStatus(id);
  } catch (e) {
    if (!isDomainError(e)) throw e;
    log().warn({ orderId: id, error: e.message }, "bridge order status unknown this pass");
    return null;
  }
}

type Budget = { left: number };

async function adoptQuotes(
  deps: AppDeps & { extendPaymentExpiry: PaymentExpiry },
  bridge: BridgeProvider,
  budget: Budget,
): Promise<number> {
  if (budget.left <= 0) return 0;
  const now = deps.now();
  const { rows } = await deps.db.pool.query<BridgeOrderRow>(
    `SELECT * FROM (
       SELECT DISTINCT ON (payment_id) * FROM bridge_orders
        WHERE status = 'quoted' AND created_at > $1 ORDER BY payment_id, created_at DESC) latest
      WHERE created_at <= $2 AND (checked_at IS NULL OR checked_at <= $3)
      ORDER BY checked_at NULLS FIRST, created_at LIMIT $4`,
    [new Date(now - ADOPT_WINDOW_MS), new Date(now - ADOPT_AFTER_MS), new Date(now - ADOPT_EVERY_MS), Math.min(BATCH, budget.left)],
  );
  let adopted = 0;
  for (const o of rows) {
    budget.left--;
    const s = await statusOf(bridge, o.id);
    await deps.db.pool.query(`UPDATE bridge_orders SET checked_at = $2 WHERE id = $1`, [o.id, new Date(now)]);
    if (s && (await applyProviderStatus(deps, o, s, { reason: `unreported order found: ${s}` }))) adopted++;
  }
  return adopted;
}

async function pollLive(deps: AppDeps & { extendPaymentExpiry: PaymentExpiry }, bridge: BridgeProvider, budget: Budget): Promise<number> {
  const now = new Date(deps.now());
  // One request of a pass is kept for adoption (when the pass has two), so unreported orders are never starved.
  const limit = Math.min(BATCH, budget.left > 1 ? budget.left - 1 : budget.left);
  // Least recently asked first, so a backlog larger than the budget is served in turn; claimed by stamping
  // checked_at (SKIP LOCKED), so replicas do not ask the provider about the same orders.
  const { rows } = await deps.db.pool.query<BridgeOrderRow>(
    `UPDATE bridge_orders SET checked_at = $2 WHERE id IN (
       SELECT id FROM bridge_orders
        WHERE status = ANY($1::text[]) AND (checked_at IS NULL OR checked_at <= $2::timestamptz - ${POLL_BACKOFF_SQL})
        ORDER BY checked_at NULLS FIRST, reported_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
     RETURNING *`,
    [LIVE, now, limit],
  );
  let moved = 0;
  for (const o of rows) {
    budget.left--;
    const s = await statusOf(bridge, o.id);
    if (s && (await applyProviderStatus(deps, o, s))) moved++;
  }
  return moved;
}

function senderFor(deps: AppDeps, chainId: number, account: PrivateKeyAccount) {
  const chain = deps.chains.find((c) => c.chainId === chainId);
  const client = deps.clients.get(chainId);
  return chain && client ? txSender({ db: deps.db, chain, client, account }) : null;
}

async function autoCancel(deps: AppDeps, bridge: BridgeProvider, authority: PrivateKeyAccount): Promise<number> {
  const now = deps.now();
  const { rows } = await deps.db.pool.query<BridgeOrderRow>(
    // An order whose last cancel attempt went wrong (error noted) is tried again a minute later, not every pass.
    `SELECT * FROM bridge_orders WHERE status = 'created' AND reported_at <= $1 AND (error IS NULL OR updated_at <= $2)
      ORDER BY reported_at LIMIT ${BATCH}`,
    [new Date(now - AUTO_CANCEL_MS), new Date(now - CANCEL_RETRY_MS)],
  );
  let sent = 0;
  for (const o of rows) {
    const note = (error: string) =>
      deps.db.pool.query(`UPDATE bridge_orders SET error = $2, updated_at = $3 WHERE id = $1`, [o.id, error, new Date(deps.now())]);
    try {
      if (await cancelOne(deps, bridge, authority, o, note, now)) sent++;
    } catch (e) {
      // One order's failure (a bad RPC answer, a database hiccup) must not keep the others from being cancelled.
      const message = e instanceof Error ? e.message.split("\n")[0]! : String(e);
      log().error({ orderId: o.id, error: message }, "bridge order cancel failed");
      await note(`cancel failed: ${message}`).catch(() => undefined);
    }
  }
  return sent;
}

/** Sends one order's cancel: true when a transaction was sent. Refusals and the provider's answers are noted on the order. */
async function cancelOne(
  deps: AppDeps,
  bridge: BridgeProvider,
  authority: PrivateKeyAccount,
  o: BridgeOrderRow,
  note: (error: string) => Promise<unknown>,
  now: number,
): Promise<boolean> {
  const sender = senderFor(deps, o.dst_chain_id, authority);
  if (!sender) {
    await note(`no RPC for destination chain ${o.dst_chain_id}: cannot cancel`);
    return false;
  }
  let cancel;
  try {
    cancel = await bridge.cancelTx(o.id);
  } catch (e) {
    // Not cancellable (filled meanwhile) or the provider is down: the next poll tells which.
    if (!isDomainError(e)) throw e;
    if (e instanceof Conflict) await note(e.message);
    return false;
  }
  // Never sign what is not this order's cancel by our authority, to the bridge contract of its destination chain.
  const chain = deps.chains.find((c) => c.chainId === o.dst_chain_id);
  const checked = checkCancelTx(cancel, {
    chainId: o.dst_chain_id,
    authority: authority.address,
    destination: chain?.bridgeDestination,
    orderId: o.id,
    srcChainId: o.src_chain_id,
    // A Solana payer is named by its key's 32 bytes in DLN's cancel.
    payer: o.src_chain_id === SOLANA_CHAIN_ID ? solanaKeyHex(o.payer) : o.payer,
  });
  const refusal = typeof checked === "string" ? checked : await valueRefusal(deps, o, cancel.value, chain!, now);
  if (refusal) {
    log().warn({ orderId: o.id, refusal }, "bridge cancel-tx refused");
    await note(refusal);
    return false;
  }
  try {
    const tx = await sender.sendTransaction({
      to: getAddress(cancel.to),
      data: cancel.data as Hex,
      value: cancel.value,
      gasCap: BRIDGE_CANCEL_GAS_CAP,
      claim: async (c) => {
        const { rows: r } = await c.query(`SELECT status FROM bridge_orders WHERE id = $1 FOR UPDATE`, [o.id]);
        return r[0]?.status === "created";
      },
      record: async (c, signed) => {
        await transitionOrder(c, o.id, {
          from: ["created"],
          to: "cancel_sent",
          reason: "not filled within 5 minutes: cancelled by the order authority",
          set: {
            cancel_tx_hash: signed.hash,
            cancel_raw_tx: signed.rawTx,
            cancel_nonce: signed.nonce,
            cancel_tx_status: "signed",
            refund_to: o.src_chain_id === SOLANA_CHAIN_ID ? o.payer : (checked as { beneficiary: string }).beneficiary,
            error: null,
          },
          now,
        });
      },
      sent: async (signed) => {
        await deps.db.pool.query(
          `UPDATE bridge_orders SET cancel_tx_status = 'sent' WHERE id = $1 AND cancel_tx_hash = $2 AND cancel_tx_status = 'signed'`,
          [o.id, signed.hash],
        );
      },
    });
    return !!tx;
  } catch (e) {
    // The cancel reverts as it stands (the order was filled meanwhile): nothing signed; the poll sees the fill.
    if (!(e instanceof GasEstimateError)) throw e;
    await note(`cancel would revert: ${e.message.split("\n")[0]}`);
    return false;
  }
}

/**
 * Why a cancel's value must not be sent, or null: deBridge's messaging fee of the destination chain's gate (read on
 * chain), plus at most BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD at the native price (without a price: at most the fee again).
 */
async function valueRefusal(
  deps: AppDeps,
  o: BridgeOrderRow,
  value: bigint,
  chain: AppDeps["chains"][number],
  now: number,
): Promise<string | null> {
  const client = deps.clients.get(chain.chainId);
  if (!client || !chain.bridgeDestination) return `no RPC for destination chain ${chain.chainId}: cannot cancel`;
  let fee;
  try {
    fee = await readMessagingFee(client, chain.bridgeDestination, o.src_chain_id, now);
  } catch (e) {
    if (!isDomainError(e)) throw e;
    return e.message;
  }
  const usd18 = parsePrice18(deps.config.BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD);
  const price = await resolveNativePriceUsd(deps, chain.chainId, undefined, { cached: true }).catch(() => null);
  const maxExtra = price ? (usd18 * 10n ** 18n) / price.priceUsd18 : fee.fixFee;
  const ceiling = chain.bridgeCancelMaxValueWei === undefined ? undefined : { wei: chain.bridgeCancelMaxValueWei, chainId: chain.chainId };
  return cancelValueRefusal(value, fee, maxExtra, ceiling);
}

async function reconcileCancels(deps: AppDeps, authority: PrivateKeyAccount) {
  const { rows } = await deps.db.pool.query<BridgeOrderRow>(
    `SELECT * FROM bridge_orders WHERE status = 'cancel_sent' AND cancel_tx_status IN ('signed', 'sent') ORDER BY cancel_nonce LIMIT ${BATCH}`,
  );
  for (const chainId of new Set(rows.map((r) => r.dst_chain_id))) {
    const sender = senderFor(deps, chainId, authority);
    if (!sender) continue;
    const txs = rows
      .filter((r) => r.dst_chain_id === chainId)
      .map((r) => ({ ...r, hash: r.cancel_tx_hash as Hex, rawTx: r.cancel_raw_tx as Hex, nonce: r.cancel_nonce! }));
    await sender.reconcile(txs, (o, outcome) => applyCancelOutcome(deps, o, outcome));
  }
}

/** Whether the order (locked here) is still waiting on this very cancel transaction, not a later one. */
async function stillCancelling(c: pg.PoolClient, o: BridgeOrderRow): Promise<boolean> {
  const { rows } = await c.query<{ ok: boolean }>(
    `SELECT status = 'cancel_sent' AND cancel_tx_hash = $2 AND cancel_tx_status IN ('signed', 'sent') AS ok
       FROM bridge_orders WHERE id = $1 FOR UPDATE`,
    [o.id, o.cancel_tx_hash],
  );
  return rows[0]?.ok === true;
}

/** Cancel transactions of one order that may revert before the order is left to the operator (`failed`). */
export const MAX_CANCEL_REVERTS = 3;
const REVERTED = "cancel transaction reverted";

/**
 * What a cancel transaction's fate does to its order: mined -> recorded (the poll then sees SentOrderCancel and
 * ClaimedOrderCancel); dropped -> back to `created`, cancelled again next pass; reverted -> back to `created` too
 * (a fill that won the race shows at the next poll, and the provider then refuses cancel-tx), up to
 * MAX_CANCEL_REVERTS reverts, after which the order is `failed`, logged as an error for the operator: never
 * cancelled again by the service, still followed and still holding its payment (it may yet be filled). An outcome
 * of a cancel the order no longer waits on (applied already, or superseded) changes nothing.
 * @example await applyCancelOutcome(deps, order, { status: "reverted", receipt });
 */
export async function applyCancelOutcome(deps: AppDeps, o: BridgeOrderRow, outcome: TxOutcome) {
  const now = deps.now();
  if (outcome.status === "reverted") {
    await withTransaction(deps.db, async (c) => {
      // Locked first: another replica may have applied this outcome already and sent the next cancel.
      if (!(await stillCancelling(c, o))) return;
      const { rows } = await c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM bridge_order_events WHERE order_id = $1 AND reason LIKE '${REVERTED}%'`,
        [o.id],
      );
      const reverts = rows[0]!.n + 1;
      const giveUp = reverts >= MAX_CANCEL_REVERTS;
      const moved = await transitionOrder(c, o.id, {
        from: ["cancel_sent"],
        to: giveUp ? "failed" : "created",
        reason: giveUp ? `${REVERTED} ${reverts} times: left to the operator` : `${REVERTED} (${reverts} of ${MAX_CANCEL_REVERTS})`,
        set: { cancel_tx_status: "reverted", error: `${REVERTED} (${o.cancel_tx_hash})` },
        now,
      });
      if (moved && giveUp) log().error({ orderId: o.id, paymentId: o.payment_id }, "bridge order cancel keeps reverting: order failed");
    });
    return;
  }
  if (outcome.status === "dropped") {
    // Never mined and never will be: the order is back to `created`, and the next pass cancels it again.
    await withTransaction(deps.db, async (c) => {
      if (!(await stillCancelling(c, o))) return;
      await transitionOrder(c, o.id, {
        from: ["cancel_sent"],
        to: "created",
        reason: "cancel transaction dropped",
        set: { cancel_tx_status: "dropped" },
        now,
      });
    });
    return;
  }
  // Mined: the hash of the version that mined (a stuck cancel may have been replaced with higher fees).
  await deps.db.pool.query(
    `UPDATE bridge_orders SET cancel_tx_status = $3, updated_at = $4, cancel_tx_hash = COALESCE($5, cancel_tx_hash)
      WHERE id = $1 AND cancel_tx_hash = $2 AND cancel_tx_status IN ('signed', 'sent')`,
    [o.id, o.cancel_tx_hash, outcome.status, new Date(now), outcome.status === "mined" ? outcome.receipt.transactionHash : null],
  );
}
