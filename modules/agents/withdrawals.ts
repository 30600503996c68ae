import { encodeFunctionData, erc20Abi, getAddress, zeroAddress, type Address, type Hex } from "viem";
import { TRANSFER_GAS_CAP } from "../../chains/gas-caps.js";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid } from "../../core/errors.js";
import { formatAmount } from "../../core/money.js";
import { logger } from "../../core/log.js";
import { withTransaction } from "../../db/client.js";
import { findToken, type ActiveChain } from "../../chains/runtime.js";
import { GasEstimateError, isReceiptNotFound, type TxSender } from "../../chains/tx-sender.js";
import { requireAgent } from "./agents.js";
import { USD_CURRENCY } from "./earnings.js";
import { agentWithdrawalBody, parseAgentBody } from "./bodies.js";
import { payoutShortfall } from "./payout-wallet.js";
import { transitionWithdrawal } from "./transition.js";

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
  /** Why it waits (`requested`: the payout wallet is short, an RPC error; retried at `nextAttemptAt`) or failed. */
  error: string | null;
  nextAttemptAt: number | null;
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
  error: string | null;
  next_attempt_at: Date | null;
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
  error: r.error,
  nextAttemptAt: r.status === "requested" && r.next_attempt_at ? r.next_attempt_at.getTime() : null,
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
  const { chainId, token, balance } = parseAgentBody(agentWithdrawalBody, body, "withdrawal");
  const chain = deps.chains.find((c) => c.chainId === Number(chainId));
  if (!chain) throw new Invalid("Unsupported network");
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

const RETRY_BASE_MS = 5_000;
const RETRY_MAX_MS = 10 * 60_000;

/**
 * One pass of the agent-payouts processor on a chain. What became of the withdrawals already signed: mined or
 * reverted is recorded, and final once AGENT_PAYOUT_CONFIRMATIONS (default the chain's finality) deep and still in the
 * chain: `paid`, or `failed` with the amount given back to the balance; dropped for its nonce: sent again. Then the
 * requested ones are sent. One that cannot be sent now (the payout wallet short of the token or of gas, an RPC error)
 * keeps its reason and is retried with a backoff, so it never holds up the others.
 */
export async function payAgentWithdrawals(deps: AppDeps, chain: ActiveChain, sender: TxSender): Promise<void> {
  const log = logger("agent-payouts").child({ chainId: chain.chainId });
  await reconcileWithdrawals(deps, chain, sender);
  await finalizeWithdrawals(deps, chain);
  const { rows: requested } = await deps.db.pool.query<WithdrawalRow & { attempts: number }>(
    `SELECT * FROM agent_withdrawals WHERE chain_id = $1 AND status = 'requested' AND (next_attempt_at IS NULL OR next_attempt_at <= $2)
      ORDER BY next_attempt_at NULLS FIRST, created_at, id LIMIT 20`,
    [chain.chainId, new Date(deps.now())],
  );
  const client = deps.clients.get(chain.chainId)!;
  for (const w of requested) {
    let error: string;
    try {
      // What the wallet lacks is said as such, before a transfer is estimated to revert.
      const short = await payoutShortfall(client, sender.address, w);
      if (!short) {
        await send(deps, sender, w);
        continue;
      }
      error = short;
    } catch (e) {
      const message = (e as Error).message.split("\n")[0];
      error = `${e instanceof GasEstimateError ? "the payout wallet cannot send it yet" : "sending failed"}: ${message}`;
    }
    const wait = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** w.attempts);
    await deps.db.pool.query(
      `UPDATE agent_withdrawals SET error = $2, attempts = attempts + 1, next_attempt_at = $3, updated_at = now() WHERE id = $1 AND status = 'requested'`,
      [w.id, error, new Date(deps.now() + wait)],
    );
    log.warn({ withdrawalId: w.id, retryInMs: wait, error }, "agent withdrawal waits");
  }
}

async function send(deps: AppDeps, sender: TxSender, w: WithdrawalRow) {
  const units = BigInt(w.units);
  const native = w.token_address.toLowerCase() === zeroAddress;
  const to = getAddress(w.to_address) as Address;
  await sender.sendTransaction({
    to: native ? to : (getAddress(w.token_address) as Address),
    value: native ? units : undefined,
    data: native ? undefined : encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, units] }),
    gasCap: TRANSFER_GAS_CAP,
    claim: async (client) => {
      const { rows } = await client.query(`SELECT 1 FROM agent_withdrawals WHERE id = $1 AND status = 'requested' FOR UPDATE`, [w.id]);
      return rows.length === 1;
    },
    record: async (client, tx) => {
      await transitionWithdrawal(client, w.id, {
        from: ["requested"],
        to: "signed",
        reason: `signed ${tx.hash}`,
        set: { signer: tx.from, nonce: tx.nonce, txHash: tx.hash, rawTx: tx.rawTx, error: null, attempts: 0 },
        data: { txHash: tx.hash, nonce: tx.nonce },
        now: deps.now(),
      });
    },
    sent: async (tx) => {
      await withTransaction(deps.db, (client) =>
        transitionWithdrawal(client, w.id, { from: ["signed"], to: "sent", reason: `broadcast ${tx.hash}`, now: deps.now() }),
      );
    },
  });
}

/** Signed or sent: mined or reverted is recorded with its block (final later); dropped goes back to `requested`. */
async function reconcileWithdrawals(deps: AppDeps, chain: ActiveChain, sender: TxSender) {
  const { rows: live } = await deps.db.pool.query<{ id: string; status: string; tx_hash: Hex; raw_tx: Hex; nonce: number }>(
    `SELECT id, status, tx_hash, raw_tx, nonce FROM agent_withdrawals WHERE chain_id = $1 AND signer = $2 AND status IN ('signed', 'sent') ORDER BY nonce`,
    [chain.chainId, sender.address.toLowerCase()],
  );
  await sender.reconcile(
    live.map((r) => ({ ...r, hash: r.tx_hash, rawTx: r.raw_tx })),
    async (w, outcome) => {
      await withTransaction(deps.db, async (client) => {
        const cur = await client.query<{ status: string }>(
          `SELECT status FROM agent_withdrawals WHERE id = $1 AND status IN ('signed', 'sent') FOR UPDATE`,
          [w.id],
        );
        if (!cur.rows[0]) return; // another replica reconciled it
        const now = deps.now();
        const from = ["signed", "sent"] as const;
        if (outcome.status === "mined" || outcome.status === "reverted")
          await transitionWithdrawal(client, w.id, {
            from,
            to: outcome.status,
            reason: `${outcome.status} in block ${outcome.receipt.blockNumber}`,
            set: { blockNumber: outcome.receipt.blockNumber.toString(), txHash: outcome.receipt.transactionHash },
            now,
          });
        else if (outcome.status === "dropped")
          // Its nonce went to another transaction: it can never mine; sent again with a new one.
          await transitionWithdrawal(client, w.id, {
            from,
            to: "requested",
            reason: `transaction ${w.tx_hash} dropped: its nonce was used by another`,
            set: { signer: null, nonce: null, txHash: null, rawTx: null },
            data: { txHash: w.tx_hash },
            now,
          });
        else if (cur.rows[0].status === "signed")
          await transitionWithdrawal(client, w.id, { from: ["signed"], to: "sent", reason: "broadcast (reconciled)", now });
      });
    },
  );
}

/**
 * Mined or reverted, deep enough: the receipt is read again. Still there in the same block: `paid`, or `failed` with
 * the amount returned to the balance, once. Gone (a re-org): back to `sent`, and the sender broadcasts the same
 * bytes again. In another block: that block is waited for.
 */
async function finalizeWithdrawals(deps: AppDeps, chain: ActiveChain) {
  const { rows } = await deps.db.pool.query<{ id: string; status: string; tx_hash: Hex; block_number: string }>(
    `SELECT id, status, tx_hash, block_number FROM agent_withdrawals WHERE chain_id = $1 AND status IN ('mined', 'reverted') ORDER BY block_number`,
    [chain.chainId],
  );
  if (!rows.length) return;
  const client = deps.clients.get(chain.chainId)!;
  const depth = BigInt(deps.config.AGENT_PAYOUT_CONFIRMATIONS ?? chain.finalityBlocks);
  const head = await client.getBlockNumber();
  for (const w of rows) {
    if (head - BigInt(w.block_number) + 1n < depth) continue;
    let receipt: Awaited<ReturnType<typeof client.getTransactionReceipt>> | null;
    try {
      receipt = await client.getTransactionReceipt({ hash: w.tx_hash });
    } catch (e) {
      if (!isReceiptNotFound(e)) throw e;
      receipt = null;
    }
    await withTransaction(deps.db, async (c) => {
      const cur = await c.query(`SELECT 1 FROM agent_withdrawals WHERE id = $1 AND status = $2 FOR UPDATE`, [w.id, w.status]);
      if (!cur.rowCount) return;
      const at = deps.now();
      const now = new Date(at);
      const from = [w.status as "mined" | "reverted"];
      if (!receipt) {
        await transitionWithdrawal(c, w.id, {
          from,
          to: "sent",
          reason: `receipt of ${w.tx_hash} gone (re-org): broadcast again`,
          set: { blockNumber: null },
          now: at,
        });
      } else if (receipt.blockNumber.toString() !== w.block_number || (receipt.status === "success") !== (w.status === "mined")) {
        const status = receipt.status === "success" ? "mined" : "reverted";
        await transitionWithdrawal(c, w.id, {
          from,
          to: status,
          reason: `re-org: ${status} in block ${receipt.blockNumber}`,
          set: { blockNumber: receipt.blockNumber.toString() },
          now: at,
        });
      } else if (w.status === "mined") {
        await transitionWithdrawal(c, w.id, { from, to: "paid", reason: `final at depth ${depth}`, now: at });
      } else {
        await transitionWithdrawal(c, w.id, {
          from,
          to: "failed",
          reason: `reverted, final at depth ${depth}`,
          set: { error: "transaction reverted" },
          now: at,
        });
        // The amount goes back to the balance, once.
        await c.query(
          `INSERT INTO agent_earnings (agent_id, kind, withdrawal_id, chain_id, currency, decimals, symbol, units, created_at)
           SELECT agent_id, 'withdrawal_refund', withdrawal_id, chain_id, currency, decimals, symbol, -units, $2
             FROM agent_earnings WHERE withdrawal_id = $1 AND kind = 'withdrawal'
           ON CONFLICT (withdrawal_id, kind) WHERE withdrawal_id IS NOT NULL DO NOTHING`,
          [w.id, now],
        );
        logger("agent-payouts").error(
          { withdrawalId: w.id, txHash: w.tx_hash },
          "agent withdrawal reverted; amount returned to the balance",
        );
      }
    });
  }
}
