import { createWalletClient, encodeFunctionData, http, keccak256, type Hex, type PublicClient } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { walletFactoryAbi } from "../../abis/WalletFactory.js";
import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { withTransaction } from "../../db/client.js";
import { viemChain } from "../../chains/clients.js";
import type { PaymentRow } from "../payments/types.js";
import { sweepFeeUnits } from "./plan.js";
import { broadcast, COVERING, failPayments, type SettlerHooks } from "./shared.js";

/** Step 2: one signed sweep transaction for every ready payment of the chain (a batch when several). */
export async function send(deps: AppDeps, chain: ActiveChain, pub: PublicClient, account: PrivateKeyAccount, hooks: SettlerHooks): Promise<void> {
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
