import type { PublicClient } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import type { PaymentRow } from "../payments/types.js";
import { broadcast, failPayments, LIVE } from "./shared.js";

/**
 * Step 0: reconcile transactions already signed. Mined -> record the receipt; reverted -> the
 * payments fail (Gas Tank fee refunded); not known to the node -> re-broadcast the same bytes,
 * unless the nonce was used by another of our transactions (then it can never mine: dropped,
 * and its payments are swept again).
 */
export async function reconcile(deps: AppDeps, chain: ActiveChain, pub: PublicClient, account: PrivateKeyAccount) {
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
