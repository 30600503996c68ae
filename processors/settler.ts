import { createWalletClient, encodeFunctionData, formatUnits, http, keccak256, type Hex, type PublicClient } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { walletFactoryAbi } from "../abis/WalletFactory.js";
import type { AppDeps } from "../api/context.js";
import type { ActiveChain } from "../chains/runtime.js";
import { withTransaction } from "../db/client.js";
import { viemChain } from "../lib/clients.js";
import { gasTankBalance, GAS_TANK_DECIMALS } from "../payments/gas-tank.js";
import { sweepFeeUnits, usesGasTank } from "../payments/settlement-plan.js";
import { transition } from "../payments/state-machine.js";
import type { PaymentRow } from "../payments/types.js";
import type { Processor } from "./runner.js";

/** Settlements still in flight (to reconcile). */
const LIVE = `('signed', 'sent')`;
/** Settlements that cover their payments: in flight, or mined and waiting for the sweep to be indexed. */
const COVERING = `('signed', 'sent', 'mined')`;
const usdt = (micros: bigint) => formatUnits(micros, GAS_TANK_DECIMALS);

function settlerAccount(deps: AppDeps): PrivateKeyAccount {
  const key = deps.config.SETTLER_PRIVATE_KEY;
  if (!key) throw new Error("SETTLER_PRIVATE_KEY is not set");
  return privateKeyToAccount(key as Hex);
}

/**
 * Step 1: paid / awaiting_gas -> deploying_wallet. In Gas Tank mode the fee is debited in the same
 * transaction (merchant row locked, so concurrent settlements cannot overdraw); a short tank moves
 * the payment to awaiting_gas, from which it resumes by itself once the tank is funded.
 */
async function reserve(deps: AppDeps, chain: ActiveChain): Promise<void> {
  // A payment short of gas is looked at again only once its merchant's ledger has a newer entry.
  const { rows } = await deps.db.pool.query<PaymentRow>(
    `SELECT * FROM payments p
      WHERE p.chain_id = $1
        AND (p.status = 'paid'
             OR (p.status = 'awaiting_gas' AND EXISTS (
                   SELECT 1 FROM ledger_entries l WHERE l.merchant_id = p.merchant_id AND l.id > COALESCE(p.gas_checked_ledger_id, 0))))
      ORDER BY p.paid_at LIMIT 200`,
    [chain.chainId],
  );
  for (const p of rows) {
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      if (usesGasTank(p)) {
        await client.query(`SELECT id FROM merchants WHERE id = $1 FOR UPDATE`, [p.merchant_id]);
        const need = BigInt(p.gas_tank_fee_micros);
        const balance = await gasTankBalance(client, p.merchant_id);
        if (balance < need) {
          const seen = (await client.query(`SELECT COALESCE(max(id), 0)::text AS id FROM ledger_entries WHERE merchant_id = $1`, [p.merchant_id])).rows[0].id;
          if (p.status === "awaiting_gas") await client.query(`UPDATE payments SET gas_checked_ledger_id = $2 WHERE id = $1`, [p.id, seen]);
          else
            await transition(client, p.id, {
              from: ["paid"],
              to: "awaiting_gas",
              reason: "Gas Tank balance insufficient",
              set: { gas_checked_ledger_id: seen },
              now,
              event: {
                name: "payment.awaiting_gas",
                extra: { estimatedFeeUsdt: usdt(need), gasTankBalance: usdt(balance), requiredTopUp: usdt(need - balance) },
              },
            });
          return;
        }
        const moved = await transition(client, p.id, { from: ["paid", "awaiting_gas"], to: "deploying_wallet", reason: "settlement reserved", now });
        if (moved && need > 0n)
          await client.query(
            `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, payment_id, chain_id, reference) VALUES ($1, 'settlement_fee', $2, $3, $4, $5)
             ON CONFLICT (reference) DO NOTHING`,
            [p.merchant_id, (-need).toString(), p.id, p.chain_id, `fee:${p.id}`],
          );
        return;
      }
      if (sweepFeeUnits(p) > BigInt(p.received_units)) {
        await transition(client, p.id, {
          from: ["paid"],
          to: "failed",
          reason: "fees exceed the amount received",
          set: { failure_reason: "fees exceed the amount received" },
          event: { name: "payment.failed", extra: { reason: "fees exceed the amount received" } },
          now,
        });
        return;
      }
      await transition(client, p.id, { from: ["paid"], to: "deploying_wallet", reason: "settlement reserved", now });
    });
  }
}

/** Step 2: one signed sweep transaction for every ready payment of the chain (a batch when several). */
async function send(deps: AppDeps, chain: ActiveChain, pub: PublicClient, account: PrivateKeyAccount, hooks: SettlerHooks): Promise<void> {
  const { rows } = await deps.db.pool.query<PaymentRow>(
    `SELECT p.* FROM payments p
      WHERE p.chain_id = $1 AND p.status IN ('deploying_wallet', 'withdrawing')
        AND NOT EXISTS (SELECT 1 FROM settlements s WHERE p.id = ANY(s.payment_ids) AND s.status IN ${COVERING})
      ORDER BY p.paid_at NULLS LAST LIMIT 50`,
    [chain.chainId],
  );
  if (rows.length === 0) return;
  const feeRecipient = (deps.config.FEE_RECIPIENT ?? account.address) as Hex;
  const requests = rows.map((p) => ({
    salt: p.salt as Hex,
    payout: p.merchant_address as Hex,
    token: p.token_address as Hex,
    fee: sweepFeeUnits(p),
    feeRecipient,
  }));
  const data =
    requests.length === 1
      ? encodeFunctionData({ abi: walletFactoryAbi, functionName: "deployAndSweep", args: [requests[0]!.salt, requests[0]!.payout, requests[0]!.token, requests[0]!.fee, requests[0]!.feeRecipient] })
      : encodeFunctionData({ abi: walletFactoryAbi, functionName: "deployAndSweepBatch", args: [requests] });

  let gas: bigint;
  try {
    gas = await pub.estimateGas({ account, to: chain.factory!, data });
  } catch (e) {
    // A batch fails as a whole: settle one by one next pass by failing only the payment that cannot be swept.
    if (rows.length > 1) {
      for (const p of rows) await send1(deps, chain, pub, account, p, hooks);
      return;
    }
    await failPayments(deps, rows, `sweep cannot execute: ${(e as Error).message.split("\n")[0]}`);
    return;
  }
  await signAndBroadcast(deps, chain, pub, account, rows.map((p) => p.id), data, gas, hooks);
}

async function send1(deps: AppDeps, chain: ActiveChain, pub: PublicClient, account: PrivateKeyAccount, p: PaymentRow, hooks: SettlerHooks) {
  const fee = sweepFeeUnits(p);
  const feeRecipient = (deps.config.FEE_RECIPIENT ?? account.address) as Hex;
  const data = encodeFunctionData({ abi: walletFactoryAbi, functionName: "deployAndSweep", args: [p.salt as Hex, p.merchant_address as Hex, p.token_address as Hex, fee, feeRecipient] });
  try {
    const gas = await pub.estimateGas({ account, to: chain.factory!, data });
    await signAndBroadcast(deps, chain, pub, account, [p.id], data, gas, hooks);
  } catch (e) {
    await failPayments(deps, [p], `sweep cannot execute: ${(e as Error).message.split("\n")[0]}`);
  }
}

/**
 * The signed transaction is stored before it is broadcast: after a crash at any point the same
 * bytes (same nonce, same hash) are re-sent or found mined, so a payment is never swept twice and
 * a sent transaction is never forgotten. The nonce is taken under an advisory lock per signer.
 */
async function signAndBroadcast(deps: AppDeps, chain: ActiveChain, pub: PublicClient, account: PrivateKeyAccount, paymentIds: string[], data: Hex, gas: bigint, hooks: SettlerHooks) {
  const wallet = createWalletClient({ account, chain: viemChain(chain), transport: http(chain.rpcUrl) });
  const fees = await pub.estimateFeesPerGas();
  const settlement = await withTransaction(deps.db, async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`nonce:${chain.chainId}:${account.address.toLowerCase()}`]);
    // Another replica may have signed for these payments since we read them.
    const taken = await client.query(`SELECT 1 FROM settlements WHERE payment_ids && $1::uuid[] AND status IN ${COVERING} LIMIT 1`, [paymentIds]);
    if (taken.rowCount) return null;
    const { rows } = await client.query(
      `SELECT max(nonce) AS n FROM settlements WHERE chain_id = $1 AND signer = $2 AND status <> 'dropped'`,
      [chain.chainId, account.address.toLowerCase()],
    );
    const pending = await pub.getTransactionCount({ address: account.address, blockTag: "pending" });
    const nonce = Math.max(pending, rows[0].n === null ? 0 : Number(rows[0].n) + 1);
    const raw = await wallet.signTransaction({
      account,
      chain: viemChain(chain),
      to: chain.factory!,
      data,
      nonce,
      gas: (gas * 12n) / 10n,
      maxFeePerGas: fees.maxFeePerGas!,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas!,
    });
    const hash = keccak256(raw);
    await client.query(
      `INSERT INTO settlements (chain_id, signer, nonce, tx_hash, raw_tx, payment_ids, status) VALUES ($1, $2, $3, $4, $5, $6, 'signed')`,
      [chain.chainId, account.address.toLowerCase(), nonce, hash, raw, paymentIds],
    );
    return { hash, raw };
  });
  if (!settlement) return;
  hooks.beforeBroadcast?.(settlement.hash);
  await broadcast(pub, settlement.raw);
  hooks.afterBroadcast?.(settlement.hash);
  await deps.db.pool.query(`UPDATE settlements SET status = 'sent', updated_at = now() WHERE tx_hash = $1 AND status = 'signed'`, [settlement.hash]);
}

async function broadcast(pub: PublicClient, raw: Hex) {
  try {
    await pub.sendRawTransaction({ serializedTransaction: raw });
  } catch (e) {
    const msg = (e as Error).message.toLowerCase();
    // Already in the pool or already mined: the stored transaction is out there, which is what we want.
    if (msg.includes("already known") || msg.includes("nonce too low") || msg.includes("already imported")) return;
    throw e;
  }
}

async function failPayments(deps: AppDeps, rows: PaymentRow[], reason: string) {
  for (const p of rows) {
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      const failed = await transition(client, p.id, {
        from: ["deploying_wallet", "withdrawing"],
        to: "failed",
        reason,
        set: { failure_reason: reason },
        event: { name: "payment.failed", extra: { reason } },
        now,
      });
      if (failed) await refundGasTank(client, p);
    });
  }
}

async function refundGasTank(client: import("pg").PoolClient, p: PaymentRow) {
  await client.query(
    `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, payment_id, chain_id, reference)
     SELECT merchant_id, 'settlement_refund', -amount_micros, payment_id, chain_id, 'refund:' || payment_id FROM ledger_entries WHERE reference = $1
     ON CONFLICT (reference) DO NOTHING`,
    [`fee:${p.id}`],
  );
}

/**
 * Step 0: reconcile transactions already signed. Mined -> record the receipt; reverted -> the
 * payments fail (Gas Tank fee refunded); not known to the node -> re-broadcast the same bytes,
 * unless the nonce was used by another of our transactions (then it can never mine: dropped,
 * and its payments are swept again).
 */
async function reconcile(deps: AppDeps, chain: ActiveChain, pub: PublicClient, account: PrivateKeyAccount) {
  const { rows } = await deps.db.pool.query(
    `SELECT * FROM settlements WHERE chain_id = $1 AND signer = $2 AND status IN ${LIVE} ORDER BY nonce`,
    [chain.chainId, account.address.toLowerCase()],
  );
  if (rows.length === 0) return;
  const confirmedNonce = await pub.getTransactionCount({ address: account.address, blockTag: "latest" });
  for (const s of rows) {
    const receipt = await pub.getTransactionReceipt({ hash: s.tx_hash }).catch(() => null);
    if (receipt) {
      await deps.db.pool.query(
        `UPDATE settlements SET status = $2, gas_used = $3, effective_gas_price = $4, block_number = $5, updated_at = now() WHERE id = $1`,
        [s.id, receipt.status === "success" ? "mined" : "reverted", receipt.gasUsed.toString(), receipt.effectiveGasPrice.toString(), receipt.blockNumber.toString()],
      );
      if (receipt.status !== "success") {
        const { rows: ps } = await deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = ANY($1)`, [s.payment_ids]);
        await failPayments(deps, ps, `sweep transaction ${s.tx_hash} reverted`);
      }
      continue;
    }
    if (s.nonce < confirmedNonce) {
      await deps.db.pool.query(`UPDATE settlements SET status = 'dropped', updated_at = now() WHERE id = $1`, [s.id]);
      continue;
    }
    await broadcast(pub, s.raw_tx);
    if (s.status === "signed") await deps.db.pool.query(`UPDATE settlements SET status = 'sent', updated_at = now() WHERE id = $1`, [s.id]);
  }
}

/**
 * Step 3: deploying_wallet -> completed (withdrawing -> withdrawn) once the Swept event of our mined
 * transaction is indexed. The amounts come from the indexed event, not from our own arithmetic.
 */
async function complete(deps: AppDeps, chain: ActiveChain) {
  const { rows } = await deps.db.pool.query(
    `SELECT p.id, p.status, s.tx_hash, s.gas_used, s.effective_gas_price, cardinality(s.payment_ids) AS batch, w.amount, w.fee
       FROM payments p
       JOIN settlements s ON p.id = ANY(s.payment_ids) AND s.status = 'mined'
       JOIN "${deps.db.viewsSchema}".sweep w ON w.chain_id = p.chain_id AND w.wallet = lower(p.recipient_address) AND w.transaction_hash = s.tx_hash
      WHERE p.chain_id = $1 AND p.status IN ('deploying_wallet', 'withdrawing')`,
    [chain.chainId],
  );
  const merchantTypes = new Map<string, string>();
  for (const r of rows) {
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      if (r.status === "withdrawing") {
        await transition(client, r.id, {
          from: ["withdrawing"],
          to: "withdrawn",
          reason: "partial payment withdrawn",
          set: { withdrawn_units: r.amount, withdrawal_tx_hash: r.tx_hash },
          now,
          event: { name: "payment.withdrawn" },
        });
        return;
      }
      const p0 = (await client.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [r.id])).rows[0]!;
      let type = merchantTypes.get(p0.merchant_id);
      if (!type) {
        type = (await client.query(`SELECT merchant_type FROM merchants WHERE id = $1`, [p0.merchant_id])).rows[0].merchant_type as string;
        merchantTypes.set(p0.merchant_id, type);
      }
      const gasUsed = Math.ceil(Number(r.gas_used) / Number(r.batch));
      const debit = (await client.query(`SELECT COALESCE(sum(-amount_micros), 0)::text AS d FROM ledger_entries WHERE payment_id = $1`, [r.id])).rows[0].d;
      await transition(client, r.id, {
        from: ["deploying_wallet"],
        to: "completed",
        reason: "settled to the merchant wallet",
        set: { settlement_tx_hash: r.tx_hash, settled_units: r.amount, completed_at: new Date(now) },
        now,
        event: {
          name: "payment.completed",
          extra: {
            transactionHash: r.tx_hash,
            feeDetails: { gasUsed, gasPrice: String(r.effective_gas_price), usdtAmountUsed: usdt(BigInt(debit)), merchantType: type },
          },
        },
      });
    });
  }
}

/** Test seams: crash the process at the two points a crash can leave a transaction half-recorded. */
export type SettlerHooks = { beforeBroadcast?: (hash: Hex) => void; afterBroadcast?: (hash: Hex) => void };

export async function settleChain(deps: AppDeps, chain: ActiveChain, hooks: SettlerHooks = {}) {
  if (!chain.factory) return;
  const pub = deps.clients.get(chain.chainId)!;
  const account = settlerAccount(deps);
  await reconcile(deps, chain, pub, account);
  await complete(deps, chain);
  await reserve(deps, chain);
  await send(deps, chain, pub, account, hooks);
}

export function createSettler(hooks: SettlerHooks = {}): Processor {
  return {
    name: "settler",
    needsIndexer: true,
    intervalMs: Number(process.env.SETTLER_INTERVAL_MS ?? 250),
    async run(deps) {
      for (const chain of deps.chains) await settleChain(deps, chain, hooks);
    },
  };
}
