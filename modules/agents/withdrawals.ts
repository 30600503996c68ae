import { encodeFunctionData, erc20Abi, getAddress, isAddress, zeroAddress, type Address, type Hex } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid } from "../../core/errors.js";
import { formatAmount } from "../../core/money.js";
import { logger } from "../../core/log.js";
import { withTransaction } from "../../db/client.js";
import { findToken, type ActiveChain } from "../../chains/runtime.js";
import { GasEstimateError, type TxSender } from "../../chains/tx-sender.js";
import { requireAgent } from "./agents.js";
import { USD_CURRENCY } from "./earnings.js";

export const NOTHING_TO_WITHDRAW = "Nothing to withdraw";
export const NO_PAYOUT_ADDRESS = "Set a payout address first";

export type AgentWithdrawal = {
  withdrawalId: string;
  chainId: string;
  token: string;
  symbol: string;
  amount: string;
  to: string;
  status: string;
  transactionHash: string | null;
  createdAt: number;
};

type WithdrawalRow = {
  id: string;
  chain_id: number;
  token_address: string;
  symbol: string;
  decimals: number;
  units: string;
  to_address: string;
  status: string;
  tx_hash: string | null;
  created_at: Date;
};

const toWithdrawal = (r: WithdrawalRow): AgentWithdrawal => ({
  withdrawalId: r.id,
  chainId: String(r.chain_id),
  token: r.token_address,
  symbol: r.symbol,
  amount: formatAmount(BigInt(r.units), r.decimals),
  to: r.to_address,
  status: r.status,
  transactionHash: r.tx_hash,
  createdAt: r.created_at.getTime(),
});

/** A stablecoin of 6 decimals on the chain, in which the USD balance is paid: 1 micro = 1 smallest unit. */
const isUsdStable = (symbol: string, decimals: number) => decimals === 6 && /^(USDT|USDC)/.test(symbol.toUpperCase());

/**
 * POST /v1/agent/withdrawals: the whole available balance of one currency, to the agent's payout address. Body
 * `{chainId, token}` withdraws what was earned in that token on that chain; `{chainId, token, balance: "usd"}` pays the
 * USD balance (Gas Tank payments' fees) in that 6-decimal stablecoin. Recorded, with its ledger row, in one transaction
 * under the agent's row lock (two requests at once: one withdrawal, the other finds nothing left); sent by the
 * agent-payouts processor through the transaction sender.
 */
export async function requestWithdrawal(
  deps: Pick<AppDeps, "db" | "chains" | "now">,
  agentId: string,
  body: unknown,
): Promise<AgentWithdrawal> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Invalid("Invalid request body");
  const { chainId, token, balance = "token", ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw new Invalid(`Unknown field: ${unknown}`);
  if (typeof chainId !== "string" || !/^[1-9][0-9]{0,9}$/.test(chainId)) throw new Invalid("chainId must be a chain id string");
  const chain = deps.chains.find((c) => c.chainId === Number(chainId));
  if (!chain) throw new Invalid("Unsupported network");
  if (typeof token !== "string" || !isAddress(token, { strict: false })) throw new Invalid("Invalid Token address format");
  if (balance !== "token" && balance !== "usd") throw new Invalid('balance must be "token" or "usd"');
  const native = token.toLowerCase() === zeroAddress;
  const known = native ? null : findToken(chain, token);
  if (!native && !known && balance === "usd") throw new Invalid("Unsupported token");
  if (balance === "usd" && !(known && isUsdStable(known.symbol, known.decimals)))
    throw new Invalid("The USD balance is paid in a 6-decimal stablecoin of the chain");
  const ledger = balance === "usd" ? { chainId: 0, currency: USD_CURRENCY } : { chainId: chain.chainId, currency: token.toLowerCase() };

  return withTransaction(deps.db, async (client) => {
    const agent = await client.query<{ payout_address: string | null }>(
      `SELECT payout_address FROM agents WHERE merchant_id = $1 FOR UPDATE`,
      [agentId],
    );
    if (!agent.rows[0]) await requireAgent(client, agentId);
    const to = agent.rows[0]!.payout_address;
    if (!to) throw new Conflict(NO_PAYOUT_ADDRESS);
    const { rows } = await client.query<{ units: string | null; decimals: number | null; symbol: string | null }>(
      `SELECT sum(units)::text AS units, max(decimals) AS decimals, max(symbol) AS symbol FROM agent_earnings
        WHERE agent_id = $1 AND chain_id = $2 AND currency = $3`,
      [agentId, ledger.chainId, ledger.currency],
    );
    const units = BigInt(rows[0]?.units ?? "0");
    if (units <= 0n) throw new Conflict(NOTHING_TO_WITHDRAW);
    const decimals = known?.decimals ?? rows[0]!.decimals!;
    const symbol = known?.symbol ?? rows[0]!.symbol!;
    const now = new Date(deps.now());
    const { rows: w } = await client.query<WithdrawalRow>(
      `INSERT INTO agent_withdrawals (agent_id, chain_id, currency, token_address, decimals, symbol, units, to_address, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING *`,
      [agentId, chain.chainId, ledger.currency, native ? zeroAddress : getAddress(token), decimals, symbol, units.toString(), to, now],
    );
    await client.query(
      `INSERT INTO agent_earnings (agent_id, kind, withdrawal_id, chain_id, currency, decimals, symbol, units, created_at)
       VALUES ($1, 'withdrawal', $2, $3, $4, $5, $6, $7, $8)`,
      [
        agentId,
        w[0]!.id,
        ledger.chainId,
        ledger.currency,
        rows[0]!.decimals ?? decimals,
        rows[0]!.symbol ?? symbol,
        (-units).toString(),
        now,
      ],
    );
    return toWithdrawal(w[0]!);
  });
}

/** An agent's withdrawals, newest first. */
export async function listWithdrawals(deps: Pick<AppDeps, "db">, agentId: string): Promise<AgentWithdrawal[]> {
  const { rows } = await deps.db.pool.query<WithdrawalRow>(
    `SELECT * FROM agent_withdrawals WHERE agent_id = $1 ORDER BY created_at DESC, id DESC LIMIT 100`,
    [agentId],
  );
  return rows.map(toWithdrawal);
}

/**
 * One pass of the agent-payouts processor on a chain: what became of the withdrawals already signed (mined: paid;
 * reverted: failed, the amount given back to the balance; dropped: sent again), then the requested ones sent. A
 * withdrawal the payout wallet cannot cover stays requested, with the reason, until the operator funds the wallet.
 */
export async function payAgentWithdrawals(deps: AppDeps, chain: ActiveChain, sender: TxSender): Promise<void> {
  const log = logger("agent-payouts").child({ chainId: chain.chainId });
  const { rows: live } = await deps.db.pool.query<{ id: string; status: string; tx_hash: Hex; raw_tx: Hex; nonce: number }>(
    `SELECT id, status, tx_hash, raw_tx, nonce FROM agent_withdrawals WHERE chain_id = $1 AND signer = $2 AND status IN ('signed', 'sent') ORDER BY nonce`,
    [chain.chainId, sender.address.toLowerCase()],
  );
  await sender.reconcile(
    live.map((r) => ({ ...r, hash: r.tx_hash, rawTx: r.raw_tx })),
    async (w, outcome) => {
      await withTransaction(deps.db, async (client) => {
        const cur = await client.query<WithdrawalRow & { agent_id: string; currency: string }>(
          `SELECT * FROM agent_withdrawals WHERE id = $1 AND status IN ('signed', 'sent') FOR UPDATE`,
          [w.id],
        );
        const row = cur.rows[0];
        if (!row) return; // another replica reconciled it
        const now = new Date(deps.now());
        if (outcome.status === "mined") {
          await client.query(`UPDATE agent_withdrawals SET status = 'paid', updated_at = $2 WHERE id = $1`, [w.id, now]);
        } else if (outcome.status === "reverted") {
          await client.query(
            `UPDATE agent_withdrawals SET status = 'failed', error = 'transaction reverted', updated_at = $2 WHERE id = $1`,
            [w.id, now],
          );
          // The amount goes back to the balance, once.
          await client.query(
            `INSERT INTO agent_earnings (agent_id, kind, withdrawal_id, chain_id, currency, decimals, symbol, units, created_at)
             SELECT agent_id, 'withdrawal_refund', withdrawal_id, chain_id, currency, decimals, symbol, -units, $2
               FROM agent_earnings WHERE withdrawal_id = $1 AND kind = 'withdrawal'
             ON CONFLICT (withdrawal_id, kind) WHERE withdrawal_id IS NOT NULL DO NOTHING`,
            [w.id, now],
          );
          log.error({ withdrawalId: w.id, txHash: w.tx_hash }, "agent withdrawal reverted; amount returned to the balance");
        } else if (outcome.status === "dropped") {
          // Its nonce went to another transaction: it can never mine; sent again with a new one.
          await client.query(
            `UPDATE agent_withdrawals SET status = 'requested', signer = NULL, nonce = NULL, tx_hash = NULL, raw_tx = NULL, updated_at = $2 WHERE id = $1`,
            [w.id, now],
          );
        } else if (row.status === "signed") {
          await client.query(`UPDATE agent_withdrawals SET status = 'sent', updated_at = $2 WHERE id = $1`, [w.id, now]);
        }
      });
    },
  );

  const { rows: requested } = await deps.db.pool.query<WithdrawalRow>(
    `SELECT * FROM agent_withdrawals WHERE chain_id = $1 AND status = 'requested' ORDER BY created_at, id LIMIT 20`,
    [chain.chainId],
  );
  for (const w of requested) {
    const units = BigInt(w.units);
    const native = w.token_address.toLowerCase() === zeroAddress;
    const to = getAddress(w.to_address) as Address;
    try {
      await sender.sendTransaction({
        to: native ? to : (getAddress(w.token_address) as Address),
        value: native ? units : undefined,
        data: native ? undefined : encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, units] }),
        claim: async (client) => {
          const { rows } = await client.query(`SELECT 1 FROM agent_withdrawals WHERE id = $1 AND status = 'requested' FOR UPDATE`, [w.id]);
          return rows.length === 1;
        },
        record: async (client, tx) => {
          await client.query(
            `UPDATE agent_withdrawals SET status = 'signed', signer = $2, nonce = $3, tx_hash = $4, raw_tx = $5, error = NULL, updated_at = now() WHERE id = $1`,
            [w.id, tx.from, tx.nonce, tx.hash, tx.rawTx],
          );
        },
        sent: async (tx) => {
          await deps.db.pool.query(
            `UPDATE agent_withdrawals SET status = 'sent', updated_at = now() WHERE tx_hash = $1 AND status = 'signed'`,
            [tx.hash],
          );
        },
      });
    } catch (e) {
      if (!(e instanceof GasEstimateError)) throw e;
      // The payout wallet cannot make this transfer now (not enough of the token or of gas): kept, retried next pass.
      await deps.db.pool.query(`UPDATE agent_withdrawals SET error = $2, updated_at = now() WHERE id = $1 AND status = 'requested'`, [
        w.id,
        `payout wallet cannot send it yet: ${e.message.split("\n")[0]}`,
      ]);
      log.warn({ withdrawalId: w.id }, "agent withdrawal waits: the payout wallet cannot cover it");
    }
  }
}
