import type { LocalAccount } from "viem";
import { txSender } from "../chains/tx-sender.js";
import { payAgentWithdrawals } from "../modules/agents/index.js";
import { agentPayoutAccount } from "../modules/agents/index.js";
import { defineProcessor } from "./runner.js";
import { logger } from "../core/log.js";

/** Pays agents' withdrawals from AGENT_PAYOUT_PRIVATE_KEY (default: the settler's key), through the transaction sender. */
export function agentPayouts() {
  let account: LocalAccount | undefined;
  return defineProcessor({
    name: "agent-payouts",
    intervalMs: (deps) => Math.max(deps.config.SETTLER_INTERVAL_MS, 1_000),
    async run(deps) {
      // Most passes find nothing to do: one indexed query, then no key, sender or RPC.
      const { rows } = await deps.db.pool.query<{ chain_id: number }>(
        `SELECT DISTINCT chain_id FROM agent_withdrawals WHERE status IN ('requested', 'signed', 'sent', 'mined', 'reverted')`,
      );
      if (!rows.length) return;
      account ??= agentPayoutAccount(deps.config);
      const live = new Set(rows.map((r) => r.chain_id));
      for (const chain of deps.chains) {
        const client = deps.clients.get(chain.chainId);
        if (!client || !live.has(chain.chainId)) continue;
        // One chain's outage does not stop the others' payouts.
        try {
          await payAgentWithdrawals(deps, chain, txSender({ db: deps.db, chain, client, account }));
        } catch (e) {
          logger("agent-payouts").error({ chainId: chain.chainId, err: e }, "agent payouts pass failed on this chain");
        }
      }
    },
  });
}
