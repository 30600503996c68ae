import type { Hex, LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { remoteSignerOf } from "../../chains/remote-signer.js";
import type { AppDeps } from "../../core/deps.js";
import type { BroadcastHooks } from "../../chains/tx-sender.js";
import { withTransaction } from "../../db/client.js";
import { refundSettlementFee } from "../gas-tank/index.js";
import { transition } from "../payments/index.js";
import type { PaymentRow } from "../payments/index.js";

/** Settlements still in flight (to reconcile). */
export const LIVE = `('signed', 'sent')`;
/** Settlements that cover their payments: in flight, or mined and waiting for the sweep to be indexed. */
export const COVERING = `('signed', 'sent', 'mined')`;

/** Test seams: crash the settler at the two points a crash can leave a transaction half-recorded. */
export type SettlerHooks = BroadcastHooks;

export function settlerAccount(deps: Pick<AppDeps, "config">): LocalAccount {
  const { SETTLER_PRIVATE_KEY } = deps.config;
  // The remote signer wins: an operator who set it means the key to stay out of the service.
  const remote = remoteSignerOf(deps.config);
  if (remote) return remote;
  if (!SETTLER_PRIVATE_KEY) throw new Error("SETTLER_PRIVATE_KEY (or SIGNER_URL and SIGNER_ADDRESS) is not set");
  return privateKeyToAccount(SETTLER_PRIVATE_KEY as Hex);
}

export async function failPayments(deps: AppDeps, rows: PaymentRow[], reason: string) {
  for (const p of rows) {
    await withTransaction(deps.db, async (client) => {
      const now = deps.now();
      const failed = await transition(client, p.id, {
        from: ["deploying_wallet", "withdraw_request", "withdrawing"],
        to: "failed",
        reason,
        set: { failure_reason: reason },
        event: { name: "payment.failed", extra: { reason } },
        now,
      });
      if (failed) await refundSettlementFee(client, p.id);
    });
  }
}
